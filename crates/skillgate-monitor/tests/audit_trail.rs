//! What the audit trail records of a run: the spec the executor was given, a cancelled
//! run, and the state's schema migration.
mod common;
use common::*;
use skillgate_core::{
    BoxError, Caller, ExecOutcome, ExecRequest, ExecutorSpec, Finding, Language, LayerName,
    QuarantineSource, Severity, Skill, Status,
};
use skillgate_monitor::audit::{self, AuditRecord, ExecutionRecord};
use skillgate_monitor::detections::Detections;
use skillgate_monitor::{Durability, Monitor, MonitorConfig, MonitorLayer, Store};
use std::sync::Arc;
use std::time::Duration;
use tower::{Layer, ServiceExt, service_fn};

fn monitor_layer() -> (Arc<Store>, MonitorLayer) {
    let store = Arc::new(Store::open_in_memory().unwrap());
    let m = Monitor::new(
        store.clone(),
        Detections::builtin(),
        &MonitorConfig::default(),
    )
    .unwrap();
    (store, MonitorLayer::new(m))
}

fn request() -> ExecRequest {
    let skill = Skill::builder("s", Language::Python, b"pass".to_vec()).build();
    ExecRequest::new(Caller::new("a", "acme"), skill, serde_json::json!({}))
}

fn records(store: &Store) -> Vec<ExecutionRecord> {
    audit::parse(&store.audit_bytes().unwrap())
        .unwrap()
        .records
        .into_iter()
        .filter_map(|r| match r {
            AuditRecord::Execution(e) => Some(*e),
            _ => None,
        })
        .collect()
}

/// Issue 20, item 8: the record held the spec the request entered the pipeline with (the
/// configured defaults), not the one the inner layers decided and the executor enforced.
#[tokio::test]
async fn the_record_holds_the_spec_the_executor_was_given() {
    let (store, layer) = monitor_layer();
    // The layers inside clamp the limits and choose a seccomp profile; the executor end
    // records the spec it gets (as `PipelineBuilder` does).
    let svc = layer.layer(service_fn(|mut req: ExecRequest| async move {
        req.spec.limits.wall_timeout = Duration::from_secs(2);
        req.spec.limits.memory_bytes = 64 * MIB;
        req.spec.seccomp = Some(skillgate_core::SeccompProfile {
            name: "python".into(),
            default_action: skillgate_core::SeccompAction::Errno(1),
            syscalls: vec![skillgate_core::SyscallRule {
                names: vec!["read".into()],
                action: skillgate_core::SeccompAction::Allow,
                args: vec![],
            }],
        });
        ExecutorSpec::record(&req);
        Ok::<_, BoxError>(ran(10, MIB, 10))
    }));
    svc.oneshot(request()).await.unwrap();
    let r = &records(&store)[0];
    assert_eq!(r.spec["limits"]["wall_timeout"], "2s", "{}", r.spec);
    assert_eq!(r.spec["limits"]["memory_bytes"], "64MiB", "{}", r.spec);
    assert_eq!(r.spec["seccomp"]["name"], "python", "{}", r.spec);
    assert_eq!(r.spec["seccomp"]["rules"], 1, "{}", r.spec);
    assert_eq!(r.spec["network"]["mode"], "none", "{}", r.spec);
    assert!(!r.cancelled);

    // A request that never reached the executor was given no sandbox.
    let (store, layer) = monitor_layer();
    let denying = layer.layer(service_fn(|_r: ExecRequest| async {
        Ok::<_, BoxError>(rejected(Status::Denied, LayerName::Policy, "forbid-all"))
    }));
    denying.oneshot(request()).await.unwrap();
    assert!(records(&store)[0].spec.is_null());
}

/// Issue 20, "when the host dies": a run the sandbox ended because the host was told to
/// stop comes back with a `sandbox.cancelled` finding; the monitor records it, marked.
#[tokio::test]
async fn a_cancelled_run_is_recorded_as_cancelled() {
    let (store, layer) = monitor_layer();
    let svc = layer.layer(service_fn(|req: ExecRequest| async move {
        ExecutorSpec::record(&req);
        let mut out = ExecOutcome {
            status: Status::Error,
            signal: Some(9),
            ..ran(300, MIB, 0)
        };
        out.exit_code = None;
        out.findings.push(Finding::new(
            LayerName::Executor,
            audit::CANCELLED_FINDING,
            Severity::Medium,
            "the host was told to stop (SIGTERM); the run was ended",
        ));
        Ok::<_, BoxError>(out)
    }));
    let out = svc.oneshot(request()).await.unwrap();
    assert_eq!(out.status, Status::Error);
    let r = &records(&store)[0];
    assert!(r.cancelled, "{r:?}");
    assert_eq!(r.status, Status::Error);
    assert!(
        r.findings
            .iter()
            .any(|f| f.rule_id == audit::CANCELLED_FINDING)
    );
    assert_eq!(store.request_ids().unwrap().len(), 1);
}

/// A version 1 state (quarantines keyed by tenant and agent, no blame, no shared throttle
/// counter) is migrated when opened, keeping its quarantines and history.
#[test]
fn a_version_1_state_is_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let v1 = r#"
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.executescript('''
CREATE TABLE events(seq INTEGER PRIMARY KEY AUTOINCREMENT, request_id TEXT NOT NULL UNIQUE, ts_ms INTEGER NOT NULL,
  tenant TEXT NOT NULL, agent TEXT NOT NULL, skill TEXT NOT NULL, digest TEXT NOT NULL, status TEXT NOT NULL,
  exit_code INTEGER, signal INTEGER, wall_us INTEGER NOT NULL, cpu_us INTEGER NOT NULL, rss_bytes INTEGER NOT NULL,
  output_bytes INTEGER NOT NULL, detections INTEGER NOT NULL);
CREATE INDEX events_ts ON events(ts_ms);
CREATE INDEX events_agent_skill ON events(tenant, agent, skill, seq);
CREATE TABLE agent_minutes(tenant TEXT NOT NULL, agent TEXT NOT NULL, minute INTEGER NOT NULL, status TEXT NOT NULL,
  count INTEGER NOT NULL, PRIMARY KEY(tenant, agent, minute, status));
CREATE TABLE baselines(tenant TEXT NOT NULL, agent TEXT NOT NULL, skill TEXT NOT NULL, stats TEXT NOT NULL,
  PRIMARY KEY(tenant, agent, skill));
CREATE TABLE strikes(tenant TEXT NOT NULL, agent TEXT NOT NULL, ts_ms INTEGER NOT NULL, rule_id TEXT NOT NULL,
  request_id TEXT NOT NULL, count INTEGER NOT NULL);
CREATE INDEX strikes_agent ON strikes(tenant, agent, ts_ms);
CREATE TABLE quarantine(tenant TEXT NOT NULL, agent TEXT NOT NULL, since_ms INTEGER NOT NULL, reason TEXT NOT NULL,
  PRIMARY KEY(tenant, agent));
CREATE TABLE throttle(tenant TEXT NOT NULL, agent TEXT NOT NULL, until_ms INTEGER NOT NULL, reason TEXT NOT NULL,
  PRIMARY KEY(tenant, agent));
CREATE TABLE counters(name TEXT NOT NULL, labels TEXT NOT NULL, value REAL NOT NULL, PRIMARY KEY(name, labels));
CREATE TABLE histograms(name TEXT NOT NULL, labels TEXT NOT NULL, bucket INTEGER NOT NULL, count INTEGER NOT NULL,
  PRIMARY KEY(name, labels, bucket));
INSERT INTO quarantine VALUES('acme', 'mallory', 5, 'old strikes');
INSERT INTO events(request_id, ts_ms, tenant, agent, skill, digest, status, wall_us, cpu_us, rss_bytes, output_bytes, detections)
  VALUES('r1', 1800000000000, 'acme', 'eve', 's', 'd', 'denied', 0, 0, 0, 0, 0);
INSERT INTO agent_minutes VALUES('acme', 'eve', 30000000, 'denied', 1);
INSERT INTO throttle VALUES('acme', 'eve', 9999999999999, 'monitor.denial_burst');
PRAGMA user_version = 1;
''')
c.commit()
"#;
    std::fs::create_dir_all(dir.path()).unwrap();
    let made = std::process::Command::new("python3")
        .arg("-c")
        .arg(v1)
        .arg(dir.path().join("state.db"))
        .status()
        .unwrap();
    assert!(made.success());
    let store = Store::open(dir.path(), Durability::Flush).unwrap();
    assert!(store.is_quarantined("globex", "mallory").unwrap());
    assert_eq!(
        store.quarantine_of("mallory").unwrap().unwrap().tenant,
        "acme"
    );
    assert_eq!(store.request_ids().unwrap(), vec!["r1".to_string()]);
    assert_eq!(
        store.throttled_until("acme", "eve", 0).unwrap(),
        Some(9_999_999_999_999)
    );
    // The migrated throttle row has a full quota, shared from here on.
    let cfg = MonitorConfig {
        throttle_per_minute: 1,
        ..Default::default()
    };
    let m = Monitor::new(Arc::new(store), Detections::builtin(), &cfg).unwrap();
    let now = 1_800_000_000_000;
    assert!(m.admit("acme", "eve", now).unwrap().is_none());
    assert!(m.admit("acme", "eve", now + 1).unwrap().is_some());
    // The migrated events are kept.
    drop(m);
    let again = Store::open(dir.path(), Durability::Flush).unwrap();
    assert_eq!(
        again
            .agent_status("acme", "eve", now, 0)
            .unwrap()
            .executions,
        vec![(Status::Denied, 1)]
    );
}

/// A pipeline that fails (an `Err`, not an outcome) still leaves its audit record.
#[tokio::test]
async fn an_infrastructure_failure_is_recorded_and_returned() {
    let (store, layer) = monitor_layer();
    let failing = layer.layer(service_fn(|_r: ExecRequest| async {
        Err::<ExecOutcome, BoxError>("the executor's host is gone".into())
    }));
    let err = failing.oneshot(request()).await.unwrap_err();
    assert!(err.to_string().contains("host is gone"));
    let r = &records(&store)[0];
    assert_eq!(r.status, Status::Error);
    assert!(
        r.findings
            .iter()
            .any(|f| f.rule_id == "monitor.pipeline_error" && f.message.contains("host is gone"))
    );
}

fn disk_layer(durability: Durability) -> (tempfile::TempDir, Arc<Store>, MonitorLayer) {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), durability).unwrap());
    let config = MonitorConfig {
        durability,
        ..Default::default()
    };
    let m = Monitor::new(store.clone(), Detections::builtin(), &config).unwrap();
    (dir, store, MonitorLayer::new(m))
}

fn kinds(trail: &audit::Trail) -> Vec<(&'static str, String)> {
    trail
        .records
        .iter()
        .map(|r| match r {
            AuditRecord::Intent(i) => ("intent", i.request_id.clone()),
            AuditRecord::Execution(e) => ("execution", e.request_id.clone()),
            _ => ("other", String::new()),
        })
        .collect()
}

/// Issue 15: the run's audit record was synced after the run, on the answer's path. Now
/// its intent is in the trail before the run starts, synced while it runs, and the
/// execution record follows without a sync of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_s_intent_is_in_the_trail_before_it_starts_and_synced_beside_it() {
    let (_dir, store, layer) = disk_layer(Durability::Sync);
    let path = store.audit_path().unwrap();
    let seen = path.clone();
    let svc = layer.layer(service_fn(move |req: ExecRequest| {
        let path = seen.clone();
        async move {
            // While the run runs, the trail holds its intent and not yet its outcome.
            let trail = audit::read(&path).unwrap();
            let open: Vec<String> = trail.unfinished().map(|i| i.request_id.clone()).collect();
            assert_eq!(open, [req.id.to_string()]);
            assert_eq!(trail.executions().count(), 0);
            Ok::<_, BoxError>(ran(10, MIB, 10))
        }
    }));
    let req = request();
    let id = req.id.to_string();
    let out = svc.oneshot(req).await.unwrap();
    assert_eq!(out.status, Status::Ok, "{:?}", out.findings);
    let trail = audit::read(&path).unwrap();
    assert_eq!(
        kinds(&trail),
        [("intent", id.clone()), ("execution", id.clone())]
    );
    assert_eq!(trail.unfinished().count(), 0);
    let AuditRecord::Intent(intent) = &trail.records[0] else {
        unreachable!()
    };
    assert_eq!(
        (intent.caller.agent.as_str(), intent.skill.name.as_str()),
        ("a", "s")
    );
    assert_eq!(intent.v, audit::FORMAT_VERSION);
    // One sync for the run: its intent's. The routine commit is not synced either.
    assert_eq!(store.trail_syncs(), 1);
    assert_eq!(store.synced_commits(), 0);
}

/// A run whose commit changes enforcement state (here its strike) still has its record
/// synced before that commit, so the trail never lacks an enforcement decision the store
/// kept; and a record without an intent (the throttle's refusal, an operator's release) is
/// synced as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_enforcement_change_still_syncs_its_record() {
    let (_dir, store, layer) = disk_layer(Durability::Sync);
    let svc = layer.layer(service_fn(|_r: ExecRequest| async {
        Ok::<_, BoxError>(with_status(Status::SecurityViolation))
    }));
    svc.oneshot(request()).await.unwrap();
    let trail = audit::read(&store.audit_path().unwrap()).unwrap();
    let rec = trail.executions().next().unwrap();
    assert!(rec.monitor.strikes > 0, "{:?}", rec.monitor);
    assert_eq!(store.trail_syncs(), 2, "the intent's, then the record's");
    assert_eq!(store.synced_commits(), 1);
}

/// With durability `flush` nothing is synced, so no intent is written either.
#[tokio::test]
async fn flush_durability_writes_no_intent() {
    let (_dir, store, layer) = disk_layer(Durability::Flush);
    let svc = layer.layer(service_fn(|_r: ExecRequest| async {
        Ok::<_, BoxError>(ran(10, MIB, 10))
    }));
    let req = request();
    let id = req.id.to_string();
    svc.oneshot(req).await.unwrap();
    let trail = audit::read(&store.audit_path().unwrap()).unwrap();
    assert_eq!(kinds(&trail), [("execution", id)]);
    assert_eq!(store.trail_syncs(), 0);
}
