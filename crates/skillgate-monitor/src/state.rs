//! The seam between the monitor and where its state is kept: [`MonitorState`] (what the
//! [`Monitor`](crate::Monitor) and the policy layer's quarantine lookup call) and
//! [`StateTx`] (what one recording transaction reads and writes).
//!
//! [`Store`] (SQLite in the state directory, with the JSON Lines audit trail) is the
//! embedded default; [`PgState`](crate::PgState) keeps the same state in PostgreSQL for
//! several processes on several machines (`[store] url`).
use crate::audit::{AuditRecord, AuthFailureRecord};
use crate::baseline::Baselines;
use crate::detections::History;
use crate::store::{EventRow, QuarantineEntry, SkillFlag, Store, StoreError, ThrottleCheck, Tx};
use skillgate_core::{QuarantineSource, Status};
use std::num::NonZeroU32;
use std::sync::Arc;

/// Where the monitor keeps its state. Every backend serialises its recording
/// transactions across every thread and process sharing the state, so a quarantine,
/// a strike count or a throttle quota is decided on what every replica recorded.
pub trait MonitorState: QuarantineSource {
    /// Runs `f` in one write transaction, serialised with every other writer of the
    /// state; commits when it returns `Ok`. Use [`transact`](dyn MonitorState::transact).
    fn transact_dyn(
        &self,
        f: &mut (dyn FnMut(&mut dyn StateTx) -> Result<(), StoreError> + Send),
    ) -> Result<(), StoreError>;

    /// Takes one request slot of a throttled agent's shared rate (see
    /// [`Store::take_throttle_slot`]), atomically across processes.
    fn take_throttle_slot(
        &self,
        tenant: &str,
        agent: &str,
        now_ms: i64,
        per_minute: NonZeroU32,
    ) -> Result<ThrottleCheck, StoreError>;

    /// Until when the agent is throttled (ms since the epoch), if it is at `now_ms`.
    fn throttled_until(
        &self,
        tenant: &str,
        agent: &str,
        now_ms: i64,
    ) -> Result<Option<i64>, StoreError>;

    /// This state as the policy layer's quarantine lookup.
    fn into_quarantine_source(self: Arc<Self>) -> Arc<dyn QuarantineSource>;

    /// Counter values: `(name, labels, value)`, sorted (for [`metrics::render`](crate::metrics::render)).
    fn counters(&self) -> Result<Vec<(String, String, f64)>, StoreError>;
    /// Histogram buckets: `(name, labels, bucket index, count)`, sorted.
    fn histograms(&self) -> Result<Vec<(String, String, usize, u64)>, StoreError>;
    /// Every quarantined agent.
    fn quarantined(&self) -> Result<Vec<QuarantineEntry>, StoreError>;
    /// Every flagged skill.
    fn flagged_skills(&self) -> Result<Vec<SkillFlag>, StoreError>;
    /// Agents the state has seen (tenant, agent), sorted.
    fn agents(&self) -> Result<Vec<(String, String)>, StoreError>;

    /// Writes a run's intent record before it starts, not yet synced; `Ok(false)` when
    /// this backend keeps none (its records are durable when its transaction commits, or
    /// nothing it keeps is synced). See the audit trail's **fsync**
    /// ([`audit`](crate::audit)).
    fn announce(&self, record: &AuditRecord) -> Result<bool, StoreError> {
        let _ = record;
        Ok(false)
    }

    /// Makes the announced intents durable.
    fn sync_announced(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

impl dyn MonitorState {
    /// Runs `f` in one write transaction (see [`MonitorState::transact_dyn`]) and returns
    /// what it returned. A backend may run `f` again after a failure it can retry (a
    /// dropped connection): `f` must only act through the transaction.
    pub fn transact<R: Send>(
        &self,
        mut f: impl FnMut(&mut dyn StateTx) -> Result<R, StoreError> + Send,
    ) -> Result<R, StoreError> {
        let mut out = None;
        self.transact_dyn(&mut |tx| {
            out = Some(f(tx)?);
            Ok(())
        })?;
        out.ok_or_else(|| StoreError::Db("the transaction did not run".into()))
    }

    /// Records a refused credential: an `auth_failure` audit record, and
    /// `skillgate_auth_failures_total{reason}` counted.
    pub fn record_auth_failure(&self, record: AuthFailureRecord) -> Result<(), StoreError> {
        self.transact(|tx| {
            tx.count(
                "skillgate_auth_failures_total",
                &crate::metrics::label("reason", &record.reason),
                1.0,
            )?;
            tx.append_audit(&AuditRecord::AuthFailure(record.clone()))
        })
    }
}

/// An agent's executions kept in the state (part of [`AgentStatus`](crate::AgentStatus)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentActivity {
    /// Executions, by status.
    pub executions: Vec<(Status, u64)>,
    /// Executions on which a detection fired.
    pub anomalous: u64,
    /// The last request, ms since the epoch.
    pub last_seen_ms: Option<i64>,
}

/// What one recording transaction reads and writes: every method of the SQLite
/// transaction the monitor calls.
pub trait StateTx {
    /// The agent's quarantine, if any (keyed by agent id, whatever the tenant).
    fn quarantine_of(&self, agent: &str) -> Result<Option<QuarantineEntry>, StoreError>;
    /// The skill's flag (by code digest), if it is flagged.
    fn skill_flag(&self, digest: &str) -> Result<Option<SkillFlag>, StoreError>;
    /// Flags a skill (kept if it already is).
    fn flag_skill(
        &self,
        digest: &str,
        skill: &str,
        since_ms: i64,
        reason: &str,
    ) -> Result<(), StoreError>;
    /// Until when the agent is throttled, if it is at `now_ms`.
    fn throttled_until(
        &self,
        tenant: &str,
        agent: &str,
        now_ms: i64,
    ) -> Result<Option<i64>, StoreError>;
    /// The baselines of the agent's runs of `skill` (`*`: all its skills).
    fn baselines(&self, tenant: &str, agent: &str, skill: &str) -> Result<Baselines, StoreError>;
    /// Replaces those baselines.
    fn save_baselines(
        &self,
        tenant: &str,
        agent: &str,
        skill: &str,
        b: &Baselines,
    ) -> Result<(), StoreError>;
    /// The agent's and the skill's earlier requests, read inside this transaction.
    fn history<'a>(
        &'a self,
        tenant: &'a str,
        agent: &'a str,
        skill: &'a str,
        digest: &'a str,
    ) -> Box<dyn History + 'a>;
    /// Records `count` strikes against the agent.
    fn add_strike(
        &self,
        tenant: &str,
        agent: &str,
        ts_ms: i64,
        rule_id: &str,
        request_id: &str,
        count: u32,
    ) -> Result<(), StoreError>;
    /// The agent's strikes since `since_ms`.
    fn strikes_since(&self, tenant: &str, agent: &str, since_ms: i64) -> Result<u64, StoreError>;
    /// Quarantines the agent (kept if it already is).
    fn quarantine(
        &self,
        tenant: &str,
        agent: &str,
        since_ms: i64,
        reason: &str,
    ) -> Result<(), StoreError>;
    /// Lifts the agent's quarantine (whichever tenant it was recorded in) and clears its
    /// strikes.
    fn lift_quarantine(&self, agent: &str) -> Result<(), StoreError>;
    /// Clears the skill's flag and the block counts that raised it.
    fn clear_skill_flag(&self, digest: &str) -> Result<(), StoreError>;
    /// The agent's executions kept in the state.
    fn activity(&self, tenant: &str, agent: &str) -> Result<AgentActivity, StoreError>;
    /// The agent's baselines, per skill (`*` is all its skills together), sorted.
    fn all_baselines(
        &self,
        tenant: &str,
        agent: &str,
    ) -> Result<Vec<(String, Baselines)>, StoreError>;
    /// Throttles the agent until `until_ms` (or later, if it already is).
    fn throttle(
        &self,
        tenant: &str,
        agent: &str,
        until_ms: i64,
        reason: &str,
    ) -> Result<(), StoreError>;
    /// Records the execution; returns its sequence number.
    fn insert_event(&self, e: &EventRow<'_>) -> Result<i64, StoreError>;
    /// Deletes events and strikes older than `before_ms`, and expired throttles.
    fn prune(&self, before_ms: i64, now_ms: i64) -> Result<(), StoreError>;
    /// Adds `by` to a counter.
    fn count(&self, name: &str, labels: &str, by: f64) -> Result<(), StoreError>;
    /// Counts `value` in a histogram's `bucket` and adds it to its sum.
    fn observe(
        &self,
        name: &str,
        labels: &str,
        bucket: usize,
        value: f64,
    ) -> Result<(), StoreError>;
    /// Appends a record to the audit trail (written with the transaction).
    fn append_audit(&mut self, record: &AuditRecord) -> Result<(), StoreError>;

    /// Appends the execution record of a run whose intent record is already durable
    /// ([`MonitorState::announce`], then [`MonitorState::sync_announced`]): a backend may
    /// then leave it unsynced, unless the transaction changes enforcement state.
    fn append_audit_after_intent(&mut self, record: &AuditRecord) -> Result<(), StoreError> {
        self.append_audit(record)
    }
}

impl MonitorState for Store {
    fn transact_dyn(
        &self,
        f: &mut (dyn FnMut(&mut dyn StateTx) -> Result<(), StoreError> + Send),
    ) -> Result<(), StoreError> {
        self.transact(|tx| f(tx))
    }

    fn take_throttle_slot(
        &self,
        tenant: &str,
        agent: &str,
        now_ms: i64,
        per_minute: NonZeroU32,
    ) -> Result<ThrottleCheck, StoreError> {
        Store::take_throttle_slot(self, tenant, agent, now_ms, per_minute)
    }

    fn throttled_until(
        &self,
        tenant: &str,
        agent: &str,
        now_ms: i64,
    ) -> Result<Option<i64>, StoreError> {
        Store::throttled_until(self, tenant, agent, now_ms)
    }

    fn into_quarantine_source(self: Arc<Self>) -> Arc<dyn QuarantineSource> {
        self
    }

    fn counters(&self) -> Result<Vec<(String, String, f64)>, StoreError> {
        Store::counters(self)
    }

    fn histograms(&self) -> Result<Vec<(String, String, usize, u64)>, StoreError> {
        Store::histograms(self)
    }

    fn quarantined(&self) -> Result<Vec<QuarantineEntry>, StoreError> {
        Store::quarantined(self)
    }

    fn flagged_skills(&self) -> Result<Vec<SkillFlag>, StoreError> {
        Store::flagged_skills(self)
    }

    fn agents(&self) -> Result<Vec<(String, String)>, StoreError> {
        Store::agents(self)
    }
    fn announce(&self, record: &AuditRecord) -> Result<bool, StoreError> {
        Store::announce(self, record)
    }
    fn sync_announced(&self) -> Result<(), StoreError> {
        Store::sync_announced(self)
    }
}

/// The SQLite transaction, as the seam sees it: each method is the inherent one.
impl StateTx for Tx<'_> {
    fn quarantine_of(&self, agent: &str) -> Result<Option<QuarantineEntry>, StoreError> {
        Tx::quarantine_of(self, agent)
    }
    fn skill_flag(&self, digest: &str) -> Result<Option<SkillFlag>, StoreError> {
        Tx::skill_flag(self, digest)
    }
    fn flag_skill(
        &self,
        digest: &str,
        skill: &str,
        since_ms: i64,
        reason: &str,
    ) -> Result<(), StoreError> {
        Tx::flag_skill(self, digest, skill, since_ms, reason)
    }
    fn throttled_until(
        &self,
        tenant: &str,
        agent: &str,
        now_ms: i64,
    ) -> Result<Option<i64>, StoreError> {
        Tx::throttled_until(self, tenant, agent, now_ms)
    }
    fn baselines(&self, tenant: &str, agent: &str, skill: &str) -> Result<Baselines, StoreError> {
        Tx::baselines(self, tenant, agent, skill)
    }
    fn save_baselines(
        &self,
        tenant: &str,
        agent: &str,
        skill: &str,
        b: &Baselines,
    ) -> Result<(), StoreError> {
        Tx::save_baselines(self, tenant, agent, skill, b)
    }
    fn history<'a>(
        &'a self,
        tenant: &'a str,
        agent: &'a str,
        skill: &'a str,
        digest: &'a str,
    ) -> Box<dyn History + 'a> {
        Box::new(Tx::history(self, tenant, agent, skill, digest))
    }
    fn add_strike(
        &self,
        tenant: &str,
        agent: &str,
        ts_ms: i64,
        rule_id: &str,
        request_id: &str,
        count: u32,
    ) -> Result<(), StoreError> {
        Tx::add_strike(self, tenant, agent, ts_ms, rule_id, request_id, count)
    }
    fn strikes_since(&self, tenant: &str, agent: &str, since_ms: i64) -> Result<u64, StoreError> {
        Tx::strikes_since(self, tenant, agent, since_ms)
    }
    fn quarantine(
        &self,
        tenant: &str,
        agent: &str,
        since_ms: i64,
        reason: &str,
    ) -> Result<(), StoreError> {
        Tx::quarantine(self, tenant, agent, since_ms, reason)
    }
    fn lift_quarantine(&self, agent: &str) -> Result<(), StoreError> {
        Tx::lift_quarantine(self, agent)
    }
    fn clear_skill_flag(&self, digest: &str) -> Result<(), StoreError> {
        Tx::clear_skill_flag(self, digest)
    }
    fn activity(&self, tenant: &str, agent: &str) -> Result<AgentActivity, StoreError> {
        Tx::activity(self, tenant, agent)
    }
    fn all_baselines(
        &self,
        tenant: &str,
        agent: &str,
    ) -> Result<Vec<(String, Baselines)>, StoreError> {
        Tx::all_baselines(self, tenant, agent)
    }
    fn throttle(
        &self,
        tenant: &str,
        agent: &str,
        until_ms: i64,
        reason: &str,
    ) -> Result<(), StoreError> {
        Tx::throttle(self, tenant, agent, until_ms, reason)
    }
    fn insert_event(&self, e: &EventRow<'_>) -> Result<i64, StoreError> {
        Tx::insert_event(self, e)
    }
    fn prune(&self, before_ms: i64, now_ms: i64) -> Result<(), StoreError> {
        Tx::prune(self, before_ms, now_ms)
    }
    fn count(&self, name: &str, labels: &str, by: f64) -> Result<(), StoreError> {
        Tx::count(self, name, labels, by)
    }
    fn observe(
        &self,
        name: &str,
        labels: &str,
        bucket: usize,
        value: f64,
    ) -> Result<(), StoreError> {
        Tx::observe(self, name, labels, bucket, value)
    }
    fn append_audit(&mut self, record: &AuditRecord) -> Result<(), StoreError> {
        Tx::append_audit(self, record, false)
    }
    fn append_audit_after_intent(&mut self, record: &AuditRecord) -> Result<(), StoreError> {
        Tx::append_audit(self, record, true)
    }
}
