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
use skillgate_monitor::{Monitor, MonitorConfig, MonitorState, PgState};
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

/// The operator's calls (`skillgate monitor status | release`) read and change the same
/// state on PostgreSQL as on the state directory's SQLite: the same requests observed by
/// both give the same agent status, and a release or an unflag lifts the same things.
#[test]
fn an_operator_sees_and_releases_the_same_state_on_postgres_as_on_sqlite() {
    let url = support::fresh_database("monitor_operator");
    let cfg = MonitorConfig::default();
    let (pg_state, pg) = replica(&url, &cfg);
    let lite = memory_monitor();
    let blocked = skill_blocked(LayerName::Prescan, "py.subprocess");
    let mut quarantined_at = None;
    for i in 0..20 {
        let t = T0 + i * 1_000;
        let outcome = if i % 3 == 0 {
            ran(20 + i as u64, 8 * MIB, 40)
        } else {
            blocked.clone()
        };
        let a = lite
            .observe_at(&meta("mallory", "own"), &outcome, t)
            .unwrap();
        let b = pg.observe_at(&meta("mallory", "own"), &outcome, t).unwrap();
        assert_eq!(a.quarantined, b.quarantined, "request {i}");
        if a.quarantined && quarantined_at.is_none() {
            quarantined_at = Some(i);
        }
        lite.observe_at(&meta("alice", "stats"), &ran(30, 10 * MIB, 64), t)
            .unwrap();
        pg.observe_at(&meta("alice", "stats"), &ran(30, 10 * MIB, 64), t)
            .unwrap();
    }
    assert!(quarantined_at.is_some(), "the blocks quarantine mallory");
    let now = T0 + 60_000;
    let status = |s: &(dyn MonitorState + 'static), agent: &str| {
        s.agent_status("acme", agent, now, T0).unwrap()
    };
    for agent in ["mallory", "alice"] {
        let (a, b) = (status(&**lite.store(), agent), status(&*pg_state, agent));
        assert_eq!(a, b, "{agent}");
        assert!(!b.executions.is_empty() && !b.baselines.is_empty(), "{b:?}");
    }
    let before = status(&*pg_state, "mallory");
    assert!(
        before.quarantine.is_some() && before.strikes > 0,
        "{before:?}"
    );
    assert_eq!(lite.store().agents().unwrap(), pg_state.agents().unwrap());

    // A release lifts the quarantine and the strikes, once, audited and counted.
    let state: &(dyn MonitorState + 'static) = &*pg_state;
    let lifted = state.release("mallory", "ops", now).unwrap().unwrap();
    assert_eq!(Some(lifted), before.quarantine);
    assert!(state.release("mallory", "ops", now).unwrap().is_none());
    lite.store()
        .release("mallory", "ops", now)
        .unwrap()
        .unwrap();
    let after = status(state, "mallory");
    assert_eq!(after, status(&**lite.store(), "mallory"));
    assert!(
        after.quarantine.is_none() && after.strikes == 0,
        "{after:?}"
    );
    assert_eq!(after.executions, before.executions, "the history stays");
    assert!(!state.is_quarantined("acme", "mallory").unwrap());
    let releases: Vec<AuditRecord> = pg_state
        .audit_lines()
        .unwrap()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r| matches!(r, AuditRecord::Release(_)))
        .collect();
    let [AuditRecord::Release(r)] = &releases[..] else {
        panic!("one release record: {releases:?}")
    };
    assert_eq!((r.agent.as_str(), r.by.as_str()), ("mallory", "ops"));
    let metrics = skillgate_monitor::metrics::render_state(state, now).unwrap();
    assert!(
        metrics.contains("skillgate_quarantine_releases_total 1"),
        "{metrics}"
    );

    // A skill's flag is cleared the same way.
    state
        .transact(|tx| tx.flag_skill("d1g3st", "own", now, "blocks its callers"))
        .unwrap();
    assert_eq!(state.flagged_skills().unwrap().len(), 1);
    let flag = state.unflag_skill("d1g3st", "ops", now).unwrap().unwrap();
    assert_eq!(
        (flag.skill.as_str(), flag.reason.as_str()),
        ("own", "blocks its callers")
    );
    assert!(state.flagged_skills().unwrap().is_empty());
    assert!(state.unflag_skill("d1g3st", "ops", now).unwrap().is_none());
}
