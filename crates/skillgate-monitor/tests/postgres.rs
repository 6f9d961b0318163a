//! The monitor's state in PostgreSQL ([`PgState`]), against a real server
//! (`scripts/services up postgres`): two monitors on one database stand for two
//! replicas, each with its own connection.
mod common;
#[path = "../../../tests/support/postgres.rs"]
mod support;

use common::*;
use skillgate_core::{LayerName, QuarantineSource, Status};
use skillgate_monitor::audit::{self, AuditRecord};
use skillgate_monitor::detections::Detections;
use skillgate_monitor::{Monitor, MonitorConfig, PgState};
use std::sync::Arc;

const T0: i64 = 1_800_000_000_000;

fn replica(url: &str, cfg: &MonitorConfig) -> (Arc<PgState>, Monitor) {
    let state = Arc::new(PgState::open(url).unwrap());
    let m = Monitor::new(state.clone(), Detections::builtin(), cfg).unwrap();
    (state, m)
}

#[test]
fn strikes_recorded_by_two_replicas_quarantine_the_agent_for_both() {
    let url = support::fresh_database("monitor_strikes");
    let cfg = MonitorConfig::default();
    let (_, a) = replica(&url, &cfg);
    let (state_b, b) = replica(&url, &cfg);
    let blocked = skill_blocked(LayerName::Prescan, "py.subprocess");
    // The request that quarantines the agent on one monitor alone...
    let alone = memory_monitor();
    let needed = (0..20)
        .position(|i| {
            alone
                .observe_at(&meta("mallory", "own"), &blocked, T0 + i)
                .unwrap()
                .quarantined
        })
        .expect("the blocks quarantine the agent");
    assert!(
        needed >= 1,
        "one block should not be enough to test sharing"
    );
    // ... quarantines it too when the requests alternate between the replicas: each
    // counted the other's strikes.
    let through_replicas = (0..20)
        .position(|i| {
            let m = if i % 2 == 0 { &a } else { &b };
            m.observe_at(&meta("mallory", "own"), &blocked, T0 + i as i64)
                .unwrap()
                .quarantined
        })
        .expect("the blocks quarantine the agent");
    assert_eq!(through_replicas, needed);
    assert!(state_b.is_quarantined("acme", "mallory").unwrap());
    assert!(a.store().is_quarantined("other-tenant", "mallory").unwrap());
    assert!(!b.store().is_quarantined("acme", "alice").unwrap());
}

#[test]
fn every_execution_has_exactly_one_audit_record_even_when_recorded_again() {
    let url = support::fresh_database("monitor_audit");
    let cfg = MonitorConfig::default();
    let (state, a) = replica(&url, &cfg);
    let (_, b) = replica(&url, &cfg);
    let first = meta("alice", "s");
    let second = meta("alice", "s");
    a.observe_at(&first, &ran(10, MIB, 10), T0).unwrap();
    b.observe_at(&second, &with_status(Status::Denied), T0 + 1)
        .unwrap();
    // The same request recorded again (a retry, through the other replica): no second
    // record, no second event.
    b.observe_at(&first, &ran(10, MIB, 10), T0 + 2).unwrap();
    let lines = state.audit_lines().unwrap();
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let trail = audit::parse(text.as_bytes()).unwrap();
    let ids: Vec<_> = trail
        .records
        .iter()
        .map(|r| match r {
            AuditRecord::Execution(e) => e.request_id.clone(),
            r => panic!("unexpected record {r:?}"),
        })
        .collect();
    assert_eq!(
        ids,
        vec![first.request_id.clone(), second.request_id.clone()]
    );
    assert_eq!(
        support::psql(&url, "SELECT count(*) FROM monitor_events"),
        "2"
    );
    assert_eq!(
        support::psql(
            &url,
            "SELECT sum(value)::int FROM monitor_counters WHERE name = 'skillgate_executions_total'"
        ),
        "2"
    );
}

#[test]
fn the_throttle_quota_is_shared_by_the_replicas() {
    let url = support::fresh_database("monitor_throttle");
    let cfg = MonitorConfig {
        throttle_per_minute: 3,
        ..Default::default()
    };
    let (_, a) = replica(&url, &cfg);
    let (_, b) = replica(&url, &cfg);
    let denied = rejected(Status::Denied, LayerName::Policy, "forbid-all");
    for i in 0..5 {
        a.observe_at(&meta("eve", "s"), &denied, T0 + i).unwrap();
    }
    assert!(
        b.store()
            .throttled_until("acme", "eve", T0 + 10)
            .unwrap()
            .is_some()
    );
    // 14 requests within 6 s, alternating replicas: the quota (3 at once, then one every
    // 20 s) lets 3 through, not 3 per replica.
    let admitted = (0..14)
        .filter(|i| {
            let m = if i % 2 == 0 { &a } else { &b };
            m.admit("acme", "eve", T0 + 10 + i * 400).unwrap().is_none()
        })
        .count();
    assert_eq!(admitted, 3);
    assert!(a.admit("acme", "bob", T0 + 10).unwrap().is_none());
}

#[test]
fn a_monitor_over_postgres_records_from_inside_a_tokio_runtime() {
    // The layer calls `admit` inside its future: the synchronous client must not be
    // driven on the runtime's thread.
    let url = support::fresh_database("monitor_runtime");
    let (_, m) = replica(&url, &MonitorConfig::default());
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        assert!(m.admit("acme", "alice", T0).unwrap().is_none());
        m.observe_at(&meta("alice", "s"), &ran(10, MIB, 10), T0)
            .unwrap();
    });
}
