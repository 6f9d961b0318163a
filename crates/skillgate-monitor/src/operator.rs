//! What an operator does to the monitor's state, the same on every backend (the state
//! directory's SQLite or the shared PostgreSQL of `[store] url`): lift a quarantine, clear
//! a skill's flag, read an agent's status. Each is one transaction through [`StateTx`], so
//! a release is serialised with the runs recording strikes, and audited with them.
use crate::audit::{self, AuditRecord};
use crate::state::{MonitorState, StateTx};
use crate::store::{AgentStatus, QuarantineEntry, SkillFlag, StoreError};

impl dyn MonitorState {
    /// Lifts an agent's quarantine (whichever tenant it was recorded in) and clears its
    /// strikes; audited (a `release` record) and counted
    /// (`skillgate_quarantine_releases_total`). `Ok(None)` when it was not quarantined
    /// (nothing is written).
    ///
    /// ```
    /// use skillgate_monitor::{MonitorState, Store};
    /// let store = Store::open_in_memory().unwrap();
    /// let state: &dyn MonitorState = &store;
    /// state.transact(|tx| tx.quarantine("acme", "agent-1", 1, "strikes")).unwrap();
    /// let lifted = state.release("agent-1", "ops", 2).unwrap().unwrap();
    /// assert_eq!(lifted.reason, "strikes");
    /// assert!(state.release("agent-1", "ops", 3).unwrap().is_none());
    /// ```
    pub fn release(
        &self,
        agent: &str,
        by: &str,
        now_ms: i64,
    ) -> Result<Option<QuarantineEntry>, StoreError> {
        self.transact(|tx| {
            let Some(entry) = tx.quarantine_of(agent)? else {
                return Ok(None);
            };
            tx.lift_quarantine(agent)?;
            tx.count("skillgate_quarantine_releases_total", "", 1.0)?;
            tx.append_audit(&AuditRecord::Release(audit::ReleaseRecord {
                v: audit::FORMAT_VERSION,
                ts_ms: now_ms,
                time: audit::rfc3339(now_ms),
                tenant: entry.tenant.clone(),
                agent: agent.into(),
                by: by.into(),
                reason: entry.reason.clone(),
                quarantined_since_ms: entry.since_ms,
            }))?;
            Ok(Some(entry))
        })
    }

    /// Clears a skill's flag (by code digest); audited (an `unflag` record) and counted
    /// (`skillgate_skill_unflags_total`). `Ok(None)` when it was not flagged (nothing is
    /// written).
    pub fn unflag_skill(
        &self,
        digest: &str,
        by: &str,
        now_ms: i64,
    ) -> Result<Option<SkillFlag>, StoreError> {
        self.transact(|tx| {
            let Some(flag) = tx.skill_flag(digest)? else {
                return Ok(None);
            };
            tx.clear_skill_flag(digest)?;
            tx.count("skillgate_skill_unflags_total", "", 1.0)?;
            tx.append_audit(&AuditRecord::Unflag(audit::UnflagRecord {
                v: audit::FORMAT_VERSION,
                ts_ms: now_ms,
                time: audit::rfc3339(now_ms),
                digest: flag.digest.clone(),
                skill: flag.skill.clone(),
                by: by.into(),
                reason: flag.reason.clone(),
                flagged_since_ms: flag.since_ms,
            }))?;
            Ok(Some(flag))
        })
    }

    /// Everything the state knows about one agent; strikes counted since
    /// `strikes_since_ms`. Read in one transaction, so the parts agree.
    pub fn agent_status(
        &self,
        tenant: &str,
        agent: &str,
        now_ms: i64,
        strikes_since_ms: i64,
    ) -> Result<AgentStatus, StoreError> {
        self.transact(|tx| status_in(tx, tenant, agent, now_ms, strikes_since_ms))
    }
}

fn status_in(
    tx: &dyn StateTx,
    tenant: &str,
    agent: &str,
    now_ms: i64,
    strikes_since_ms: i64,
) -> Result<AgentStatus, StoreError> {
    let activity = tx.activity(tenant, agent)?;
    Ok(AgentStatus {
        tenant: tenant.into(),
        agent: agent.into(),
        quarantine: tx.quarantine_of(agent)?,
        throttled_until_ms: tx.throttled_until(tenant, agent, now_ms)?,
        strikes: tx.strikes_since(tenant, agent, strikes_since_ms)?,
        executions: activity.executions,
        anomalous: activity.anomalous,
        last_seen_ms: activity.last_seen_ms,
        baselines: tx.all_baselines(tenant, agent)?,
    })
}
