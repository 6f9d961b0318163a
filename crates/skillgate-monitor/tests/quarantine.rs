//! Quarantine and release at the monitor's layer, and the throttle.
mod common;
use common::*;
use skillgate_core::{
    BoxError, Caller, ExecOutcome, ExecRequest, Language, LayerName, QuarantineSource, Skill,
    Status,
};
use skillgate_monitor::audit::{self, AuditRecord};
use skillgate_monitor::detections::Detections;
use skillgate_monitor::signals::Blame;
use skillgate_monitor::{Durability, Monitor, MonitorConfig, MonitorLayer, Store};
use std::sync::Arc;
use tower::{Layer, ServiceExt, service_fn};

const T0: i64 = 1_800_000_000_000;

#[test]
fn strikes_quarantine_the_next_request_is_recorded_and_release_is_audited() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), Durability::Flush).unwrap());
    let m = Monitor::new(
        store.clone(),
        Detections::builtin(),
        &MonitorConfig::default(),
    )
    .unwrap();
    let kill = with_status(Status::SecurityViolation);
    for i in 0..2 {
        let v = m.observe_at(&meta("mallory", "s"), &kill, T0 + i).unwrap();
        assert!(!v.quarantined);
        assert!(!store.is_quarantined("acme", "mallory").unwrap());
    }
    let v = m.observe_at(&meta("mallory", "s"), &kill, T0 + 2).unwrap();
    assert!(v.quarantined, "{:?}", ids(&v));
    let q = v
        .findings
        .iter()
        .find(|f| f.rule_id == "monitor.quarantine")
        .unwrap();
    assert!(q.message.contains("3 strikes"), "{}", q.message);
    assert!(store.is_quarantined("acme", "mallory").unwrap());
    assert!(!store.is_quarantined("acme", "alice").unwrap());
    // Keyed by agent id: moving the agent to another tenant does not lift it.
    assert!(store.is_quarantined("other-tenant", "mallory").unwrap());

    // Another process opening the same state sees the quarantine.
    let again = Store::open(dir.path(), Durability::Flush).unwrap();
    assert!(again.is_quarantined("acme", "mallory").unwrap());

    // The next request (denied by the policy layer) is recorded, marked as quarantined.
    let next = meta("mallory", "s");
    m.observe_at(
        &next,
        &rejected(Status::Denied, LayerName::Policy, "quarantine"),
        T0 + 3,
    )
    .unwrap();
    assert!(store.request_ids().unwrap().contains(&next.request_id));

    // Release: lifted, strikes cleared, audited.
    let released = store.release("mallory", "operator", T0 + 4).unwrap();
    assert!(released.is_some());
    assert!(!store.is_quarantined("acme", "mallory").unwrap());
    assert!(
        store
            .release("mallory", "operator", T0 + 5)
            .unwrap()
            .is_none(),
        "nothing to release twice"
    );
    let status = store.agent_status("acme", "mallory", T0 + 6, 0).unwrap();
    assert_eq!(status.strikes, 0);
    assert!(status.quarantine.is_none());

    let trail = audit::read(&dir.path().join("audit.jsonl")).unwrap();
    assert!(!trail.torn_tail);
    let releases: Vec<_> = trail
        .records
        .iter()
        .filter_map(|r| match r {
            AuditRecord::Release(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(releases.len(), 1);
    assert_eq!(
        (releases[0].agent.as_str(), releases[0].by.as_str()),
        ("mallory", "operator")
    );
    assert!(releases[0].reason.contains("monitor.security_violation"));
    let marked = trail.records.iter().any(|r| matches!(r, AuditRecord::Execution(e) if e.request_id == next.request_id && e.monitor.was_quarantined));
    assert!(
        marked,
        "the quarantined agent's request is in the trail, marked"
    );
    let metrics = skillgate_monitor::metrics::render(&store, T0).unwrap();
    assert!(
        metrics.contains("skillgate_quarantines_total 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("skillgate_quarantine_releases_total 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("skillgate_quarantined_agents 0"),
        "{metrics}"
    );

    // After the release, one violation is one strike again, not a quarantine.
    let v = m.observe_at(&meta("mallory", "s"), &kill, T0 + 7).unwrap();
    assert!(!v.quarantined);
}

/// With durability `sync`, a routine run's commit is not synced (its audit record is),
/// and every commit that changes enforcement state is: a strike, the quarantine, the
/// release. With `flush`, none is.
#[test]
fn sync_durability_syncs_the_commits_that_change_enforcement_state() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), Durability::Sync).unwrap());
    let m = Monitor::new(
        store.clone(),
        Detections::builtin(),
        &MonitorConfig::default(),
    )
    .unwrap();
    m.observe_at(&meta("alice", "s"), &ran(12, 20 * MIB, 100), T0)
        .unwrap();
    assert_eq!(store.synced_commits(), 0, "a routine run");
    let kill = with_status(Status::SecurityViolation);
    for i in 1..=3 {
        m.observe_at(&meta("mallory", "s"), &kill, T0 + i).unwrap();
        assert_eq!(store.synced_commits(), i as u64, "strike {i}");
    }
    assert!(store.is_quarantined("acme", "mallory").unwrap());
    m.observe_at(&meta("alice", "s"), &ran(12, 20 * MIB, 100), T0 + 4)
        .unwrap();
    assert_eq!(store.synced_commits(), 3, "routine again after the syncs");
    store
        .release("mallory", "operator", T0 + 5)
        .unwrap()
        .unwrap();
    assert_eq!(store.synced_commits(), 4, "the release");
    // Every run has its audit record, whatever was synced.
    let trail = audit::read(&dir.path().join("audit.jsonl")).unwrap();
    assert_eq!(trail.records.len(), 6);

    let flush_dir = tempfile::tempdir().unwrap();
    let flush = Arc::new(Store::open(flush_dir.path(), Durability::Flush).unwrap());
    let m = Monitor::new(
        flush.clone(),
        Detections::builtin(),
        &MonitorConfig::default(),
    )
    .unwrap();
    for i in 0..3 {
        m.observe_at(&meta("mallory", "s"), &kill, T0 + i).unwrap();
    }
    assert!(flush.is_quarantined("acme", "mallory").unwrap());
    assert_eq!(flush.synced_commits(), 0);
}

#[test]
fn strikes_outside_the_window_do_not_count() {
    let m = memory_monitor();
    let kill = with_status(Status::SecurityViolation);
    let hour = 3_600_000;
    for i in 0..3 {
        let v = m.observe_at(&meta("a", "s"), &kill, T0 + i * hour).unwrap();
        assert!(!v.quarantined, "strike {i} an hour apart");
    }
}

fn request(agent: &str) -> ExecRequest {
    let skill = Skill::builder("s", Language::Python, b"pass".to_vec()).build();
    ExecRequest::new(Caller::new(agent, "acme"), skill, serde_json::json!({}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_layer_throttles_after_a_denial_burst_and_records_refusals() {
    let store = Arc::new(Store::open_in_memory().unwrap());
    let cfg = MonitorConfig {
        throttle_per_minute: 2,
        ..Default::default()
    };
    let m = Monitor::new(store.clone(), Detections::builtin(), &cfg).unwrap();
    let layer = MonitorLayer::new(m);
    let denying = layer.layer(service_fn(|_r: ExecRequest| async {
        Ok::<_, BoxError>(rejected(Status::Denied, LayerName::Policy, "forbid-all"))
    }));
    for _ in 0..5 {
        let out = denying.clone().oneshot(request("eve")).await.unwrap();
        assert_eq!(out.status, Status::Denied);
    }
    let out = denying.clone().oneshot(request("eve")).await.unwrap();
    assert!(
        out.findings
            .iter()
            .any(|f| f.rule_id == "monitor.denial_burst")
    );
    assert!(
        store
            .throttled_until("acme", "eve", skillgate_monitor::signals::now_ms())
            .unwrap()
            .is_some()
    );

    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c = calls.clone();
    let ok = layer.layer(service_fn(move |_r: ExecRequest| {
        c.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async { Ok::<_, BoxError>(ran(10, MIB, 10)) }
    }));
    let mut refused = 0;
    for _ in 0..5 {
        let out = ok.clone().oneshot(request("eve")).await.unwrap();
        assert_eq!(
            out.layers[0].name,
            LayerName::Monitor,
            "the monitor records its timing first"
        );
        if out
            .findings
            .iter()
            .any(|f| f.rule_id == "monitor.throttled")
        {
            assert_eq!(out.status, Status::Denied);
            refused += 1;
        }
    }
    // 2 per minute pass; the sixth denied request (after the burst) already used one.
    assert_eq!(refused, 4);
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    // Another agent is not throttled.
    let out = ok.clone().oneshot(request("bob")).await.unwrap();
    assert_eq!(out.status, Status::Ok);
    // Every request, refused or not, is recorded once.
    assert_eq!(store.request_ids().unwrap().len(), 6 + 5 + 1);
    let trail = audit::parse(&store.audit_bytes().unwrap()).unwrap();
    assert_eq!(trail.records.len(), 12);
}

#[tokio::test]
async fn a_store_that_cannot_record_withholds_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), Durability::Flush).unwrap());
    let m = Monitor::new(store, Detections::builtin(), &MonitorConfig::default()).unwrap();
    // Make the database unwritable under the open connection: a schema change by another
    // connection that drops the events table.
    let conn = rusqlite_free_drop(dir.path());
    assert!(conn);
    let svc = MonitorLayer::new(m).layer(service_fn(|_r: ExecRequest| async {
        let mut o = ran(10, MIB, 10);
        o.stdout = b"result".to_vec();
        Ok::<_, BoxError>(o)
    }));
    let out: ExecOutcome = svc.oneshot(request("a")).await.unwrap();
    assert_eq!(out.status, Status::Error);
    assert!(out.stdout.is_empty());
    assert_eq!(out.findings[0].rule_id, "monitor.unrecorded");
}

/// Drops the events table through a second store handle's SQL, the way a corrupted or
/// tampered state would look.
fn rusqlite_free_drop(dir: &std::path::Path) -> bool {
    std::process::Command::new("python3")
        .arg("-c")
        .arg("import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('DROP TABLE events'); c.commit()")
        .arg(dir.join("state.db"))
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

#[test]
fn opening_an_unusable_state_dir_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, b"x").unwrap();
    let err = Store::open(&file, Durability::Flush)
        .unwrap_err()
        .to_string();
    assert!(err.contains("not-a-dir"), "{err}");
    let bad = dir.path().join("bad");
    std::fs::create_dir(&bad).unwrap();
    std::fs::write(
        bad.join("state.db"),
        b"this is not a database, just text that is long enough",
    )
    .unwrap();
    let err = Store::open(&bad, Durability::Flush)
        .unwrap_err()
        .to_string();
    assert!(err.contains("bad"), "{err}");
}

/// Issue 21, item 4: a published skill whose input schema rejects everything blocked 7
/// calls of `analyst-2`, which quarantined it. Blocks the skill causes (its schema, the
/// pre-scan of its code) count against the skill, never against the caller.
#[test]
fn a_skill_that_blocks_every_call_flags_the_skill_and_never_strikes_its_caller() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(dir.path(), Durability::Flush).unwrap());
    let m = Monitor::new(
        store.clone(),
        Detections::builtin(),
        &MonitorConfig::default(),
    )
    .unwrap();
    let schema_block = skill_blocked(LayerName::Input, "input.schema");
    let code_block = skill_blocked(LayerName::Prescan, "py.subprocess");
    for i in 0..21 {
        let out = if i % 2 == 0 {
            &schema_block
        } else {
            &code_block
        };
        let v = m
            .observe_at(&folder_meta("analyst-2", "rejects-all"), out, T0 + i)
            .unwrap();
        assert!(!v.quarantined, "call {i}: {:?}", ids(&v));
        assert!(!fired(&v, "monitor.block_burst"), "call {i}: {:?}", ids(&v));
        assert!(!fired(&v, "monitor.throttle"), "call {i}: {:?}", ids(&v));
        if i > 4 {
            assert!(
                fired(&v, "monitor.skill_flagged"),
                "call {i}: {:?}",
                ids(&v)
            );
        }
    }
    assert!(!store.is_quarantined("acme", "analyst-2").unwrap());
    let status = store.agent_status("acme", "analyst-2", T0 + 30, 0).unwrap();
    assert_eq!(status.strikes, 0);
    assert!(status.throttled_until_ms.is_none());
    let digest = folder_meta("analyst-2", "rejects-all").digest;
    let flag = store
        .skill_flag(&digest)
        .unwrap()
        .expect("the skill is flagged");
    assert!(
        flag.reason.contains("monitor.skill_block_burst"),
        "{}",
        flag.reason
    );
    assert_eq!(store.flagged_skills().unwrap(), vec![flag.clone()]);
    // Its legitimate skills still run unhindered (nothing counts against the agent).
    let v = m
        .observe_at(
            &folder_meta("analyst-2", "good"),
            &ran(10, MIB, 10),
            T0 + 40,
        )
        .unwrap();
    assert!(v.findings.is_empty(), "{:?}", ids(&v));

    // The audit trail says whom each outcome counted against.
    let trail = audit::read(&dir.path().join("audit.jsonl")).unwrap();
    let blames: Vec<_> = trail
        .records
        .iter()
        .filter_map(|r| match r {
            AuditRecord::Execution(e) => Some((e.monitor.blame, e.monitor.skill_flagged)),
            _ => None,
        })
        .collect();
    assert_eq!(blames.len(), 22);
    assert!(blames[..21].iter().all(|(b, _)| *b == Blame::Skill));
    assert!(blames[4..21].iter().all(|(_, flagged)| *flagged));
    assert_eq!(blames[21], (Blame::Agent, false));

    // An operator clears the flag, audited.
    assert_eq!(
        store.unflag_skill(&digest, "oncall", T0 + 50).unwrap(),
        Some(flag)
    );
    assert!(store.skill_flag(&digest).unwrap().is_none());
    assert!(
        store
            .unflag_skill(&digest, "oncall", T0 + 51)
            .unwrap()
            .is_none()
    );
    let trail = audit::read(&dir.path().join("audit.jsonl")).unwrap();
    assert!(matches!(
        trail.records.last(),
        Some(AuditRecord::Unflag(u)) if u.by == "oncall" && u.digest == digest
    ));
}

/// Code the agent submits itself (a bare script) is the agent's: its blocks still strike.
#[test]
fn blocks_of_submitted_code_still_quarantine_the_agent() {
    let m = memory_monitor();
    let blocked = skill_blocked(LayerName::Prescan, "py.subprocess");
    let mut quarantined = false;
    for i in 0..7 {
        let v = m
            .observe_at(&meta("mallory", "own"), &blocked, T0 + i)
            .unwrap();
        quarantined |= v.quarantined;
    }
    assert!(quarantined);
    assert!(m.store().is_quarantined("acme", "mallory").unwrap());
}

/// Issue 21, item 7: the throttle's rate was counted in each process's memory, so every
/// `skillgate run` started with a full quota. It is counted in the store: monitors of
/// separate processes (here: a fresh store and monitor per request) share one quota.
#[test]
fn the_throttle_quota_is_shared_by_every_process_using_the_state() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = MonitorConfig {
        throttle_per_minute: 3,
        ..Default::default()
    };
    let process = || {
        let store = Arc::new(Store::open(dir.path(), Durability::Flush).unwrap());
        Monitor::new(store, Detections::builtin(), &cfg).unwrap()
    };
    // A denial burst throttles the agent.
    let denied = rejected(Status::Denied, LayerName::Policy, "forbid-all");
    for i in 0..5 {
        process()
            .observe_at(&meta("eve", "s"), &denied, T0 + i)
            .unwrap();
    }
    let first = process();
    assert!(
        first
            .store()
            .throttled_until("acme", "eve", T0 + 10)
            .unwrap()
            .is_some()
    );
    // 14 requests from 14 processes within 6 s: the quota (3 at once, then one every
    // 20 s) lets 3 through.
    let admitted = (0..14)
        .filter(|i| {
            process()
                .admit("acme", "eve", T0 + 10 + i * 400)
                .unwrap()
                .is_none()
        })
        .count();
    assert_eq!(admitted, 3);
    let refusal = first.admit("acme", "eve", T0 + 6000).unwrap().unwrap();
    assert_eq!(refusal.rule_id, "monitor.throttled");
    // The quota refills at its rate, for every process alike.
    assert!(
        process()
            .admit("acme", "eve", T0 + 10 + 20_000)
            .unwrap()
            .is_none()
    );
    assert!(
        process()
            .admit("acme", "eve", T0 + 10 + 20_001)
            .unwrap()
            .is_some()
    );
    // Other agents are not throttled.
    assert!(first.admit("acme", "bob", T0 + 6000).unwrap().is_none());
    // When the throttle ends, the agent is free again.
    let after = T0 + cfg.throttle_for.as_millis() as i64 + 10;
    assert!((0..10).all(|i| process().admit("acme", "eve", after + i).unwrap().is_none()));
}

#[test]
fn a_refused_credential_is_audited_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let store =
        skillgate_monitor::Store::open(dir.path(), skillgate_monitor::Durability::Flush).unwrap();
    store
        .record_auth_failure(skillgate_monitor::audit::AuthFailureRecord {
            v: skillgate_monitor::audit::FORMAT_VERSION,
            ts_ms: 5,
            time: skillgate_monitor::audit::rfc3339(5),
            request_id: "r1".into(),
            reason: "revoked".into(),
            key_id: Some("k1".into()),
            target: "POST /v1/runs".into(),
        })
        .unwrap();
    let trail = skillgate_monitor::audit::read(&store.audit_path().unwrap()).unwrap();
    assert!(matches!(
        &trail.records[..],
        [skillgate_monitor::audit::AuditRecord::AuthFailure(r)] if r.reason == "revoked" && r.request_id == "r1"
    ));
    let text = skillgate_monitor::metrics::render(&store, 0).unwrap();
    assert!(
        text.contains("skillgate_auth_failures_total{reason=\"revoked\"} 1"),
        "{text}"
    );
}
