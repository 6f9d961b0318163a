//! What the audit trail records of a run: the spec the executor was given, a cancelled
//! run, a failed pipeline.
mod common;
use common::*;
use skillgate_core::{
    BoxError, Caller, ExecOutcome, ExecRequest, ExecutorSpec, Finding, Language, LayerName,
    Severity, Skill, Status,
};
use skillgate_monitor::audit::{self, AuditRecord, ExecutionRecord};
use skillgate_monitor::detections::Detections;
use skillgate_monitor::{Monitor, MonitorConfig, MonitorLayer, Store};
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
