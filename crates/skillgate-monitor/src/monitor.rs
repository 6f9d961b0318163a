//! The monitor itself: settings, the per-execution assessment (pure, fast) and its
//! durable recording (one store transaction), quarantine strikes and the throttle.
use crate::audit::{self, MonitorRecord};
use crate::baseline::{Baselines, Metric};
use crate::detections::{Action, Context, Detections, History, Hit, RulesError, metric_value};
use crate::metrics;
use crate::signals::{Blame, RequestMeta, Signals};
use crate::state::MonitorState;
use crate::store::{EventRow, Store, StoreError, ThrottleCheck};
use serde::Deserialize;
use skillgate_core::{ExecOutcome, Finding, LayerName, Severity, Status, units};
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// How hard the store and the audit trail push each record to disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Durability {
    /// Nothing is handed back before the audit trail holds it durably: a run's intent
    /// record is `fdatasync`ed while the run runs (its execution record then follows
    /// without a sync of its own), and every other record (a refusal by the throttle, an
    /// operator's release) is synced before its commit. Power loss can take a run's
    /// outcome record, never the fact that it ran (see [`audit`](crate::audit)). The
    /// store's commits that change enforcement state (a strike, quarantine, throttle or
    /// skill flag, set or lifted) are synced too, their records before them (the WAL is
    /// fsynced after that commit, which makes every earlier commit durable as well); the
    /// other commits (the event, baselines, counters) are written and not synced, so power
    /// loss may take the store back to an earlier commit. Costs one disk flush per request,
    /// beside the run rather than after it (two more when enforcement state changes).
    #[default]
    Sync,
    /// No fsync per record (SQLite `synchronous=NORMAL` in WAL mode): a committed record
    /// survives a crash of the process (kill -9), not of the machine.
    Flush,
}

/// The `[monitor]` section of `skillgate.toml`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MonitorConfig {
    /// The state directory; default `$XDG_STATE_HOME/skillgate` or
    /// `~/.local/state/skillgate`. `skillgate run --state-dir` overrides it.
    pub state_dir: Option<PathBuf>,
    /// A directory of detection files (`*.toml`) used instead of the built-in rules.
    pub rules: Option<PathBuf>,
    /// Samples a baseline needs before it is scored.
    pub min_samples: u64,
    /// Strikes within `strike_window` that quarantine an agent.
    pub quarantine_strikes: u32,
    /// The window strikes are counted in.
    #[serde(with = "units::duration")]
    pub strike_window: Duration,
    /// How long a throttle detection limits the agent.
    #[serde(with = "units::duration")]
    pub throttle_for: Duration,
    /// Requests per minute a throttled agent may make.
    pub throttle_per_minute: u32,
    /// How long executions are kept in the store (the audit trail keeps everything).
    #[serde(with = "units::duration")]
    pub retention: Duration,
    /// `sync` (the audit record and enforcement state survive power loss) or `flush`
    /// (survives a process crash).
    pub durability: Durability,
}

impl Default for MonitorConfig {
    fn default() -> Self {
        MonitorConfig {
            state_dir: None,
            rules: None,
            min_samples: 20,
            quarantine_strikes: 3,
            strike_window: Duration::from_secs(3600),
            throttle_for: Duration::from_secs(600),
            throttle_per_minute: 6,
            retention: Duration::from_secs(7 * 24 * 3600),
            durability: Durability::Sync,
        }
    }
}

/// The monitor cannot start or cannot record.
#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    /// The state store.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The detection rules.
    #[error(transparent)]
    Rules(#[from] RulesError),
    /// A setting.
    #[error("monitor config: {0}")]
    Config(String),
}

/// The default state directory: `$XDG_STATE_HOME/skillgate`, else
/// `$HOME/.local/state/skillgate`.
pub fn default_state_dir() -> Result<PathBuf, MonitorError> {
    if let Some(x) = std::env::var_os("XDG_STATE_HOME").filter(|x| Path::new(x).is_absolute()) {
        return Ok(PathBuf::from(x).join("skillgate"));
    }
    match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        Some(h) => Ok(PathBuf::from(h).join(".local/state/skillgate")),
        None => Err(MonitorError::Config(
            "no state directory: set --state-dir, [monitor] state_dir, XDG_STATE_HOME or HOME"
                .into(),
        )),
    }
}

/// What the monitor concluded about one execution.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verdict {
    /// The monitor's findings (detections, then actions), to put on the outcome.
    pub findings: Vec<Finding>,
    /// This execution put the agent in quarantine.
    pub quarantined: bool,
    /// This execution flagged the skill.
    pub skill_flagged: bool,
    /// The agent is throttled until then (ms since the epoch).
    pub throttled_until_ms: Option<i64>,
}

/// The pure part of observing one execution: signals, detections, updated baselines.
#[derive(Debug, Clone)]
pub struct Assessment {
    /// The signals read off the outcome.
    pub signals: Signals,
    /// The detections that fired.
    pub hits: Vec<Hit>,
    /// The skill baselines with this run added (when it ran to completion).
    pub skill: Baselines,
    /// The agent baselines with this run added.
    pub agent: Baselines,
}

/// Baseline key of all of an agent's skills together.
pub const ALL_SKILLS: &str = "*";

/// The behavioural monitor: detections, baselines, actions, over a [`Store`].
///
/// ```
/// use skillgate_monitor::{Monitor, MonitorConfig, Store, RequestMeta, detections::Detections};
/// use skillgate_core::{Caller, ExecOutcome, ExecRequest, Language, Skill, Status};
/// let store = std::sync::Arc::new(Store::open_in_memory().unwrap());
/// let monitor = Monitor::new(store, Detections::builtin(), &MonitorConfig::default()).unwrap();
/// let skill = Skill::builder("s", Language::Python, b"".to_vec()).build();
/// let req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
/// let out = ExecOutcome { status: Status::SecurityViolation, ..Default::default() };
/// let v = monitor.observe(&RequestMeta::of(&req), &out).unwrap();
/// assert_eq!(v.findings[0].rule_id, "monitor.security_violation");
/// ```
pub struct Monitor {
    store: Arc<dyn MonitorState>,
    detections: Detections,
    config: MonitorConfig,
    per_minute: NonZeroU32,
}

impl std::fmt::Debug for Monitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Monitor")
            .field("store", &self.store)
            .field("detections", &self.detections.rules().len())
            .field("config", &self.config)
            .finish()
    }
}

impl Monitor {
    /// A monitor over `store` (a [`Store`] in the state directory, or another
    /// [`MonitorState`]) with `detections` (use [`Detections::builtin`] for the shipped
    /// rules) and `config`'s settings.
    pub fn new(
        store: Arc<dyn MonitorState>,
        detections: Detections,
        config: &MonitorConfig,
    ) -> Result<Self, MonitorError> {
        let per_minute = NonZeroU32::new(config.throttle_per_minute).ok_or_else(|| {
            MonitorError::Config("`throttle_per_minute` must be at least 1".into())
        })?;
        if config.quarantine_strikes == 0 {
            return Err(MonitorError::Config(
                "`quarantine_strikes` must be at least 1".into(),
            ));
        }
        if config.strike_window.is_zero() {
            return Err(MonitorError::Config(
                "`strike_window` must be longer than 0".into(),
            ));
        }
        Ok(Monitor {
            store,
            detections,
            config: config.clone(),
            per_minute,
        })
    }

    /// Opens the store in `state_dir` (or the config's, or the default) and loads the
    /// rules the config names (or the built-in ones). Any failure is an error: a
    /// monitor that cannot record must not pass requests.
    pub fn from_config(
        config: &MonitorConfig,
        state_dir: Option<&Path>,
    ) -> Result<Self, MonitorError> {
        let dir = crate::quarantine::resolve_state_dir(config, state_dir)?;
        let store = Store::open(&dir, config.durability)?;
        Self::with_state(Arc::new(store), config)
    }

    /// A monitor over `state` (the PostgreSQL state of `[store] url`, say) with the
    /// rules the config names (or the built-in ones).
    pub fn with_state(
        state: Arc<dyn MonitorState>,
        config: &MonitorConfig,
    ) -> Result<Self, MonitorError> {
        let detections = match &config.rules {
            Some(d) => Detections::load_dir(d)?,
            None => Detections::builtin(),
        };
        Self::new(state, detections, config)
    }

    /// The state (also the policy layer's [`QuarantineSource`](skillgate_core::QuarantineSource)).
    pub fn store(&self) -> &Arc<dyn MonitorState> {
        &self.store
    }

    /// The settings.
    pub fn config(&self) -> &MonitorConfig {
        &self.config
    }

    /// The detections.
    pub fn detections(&self) -> &Detections {
        &self.detections
    }

    /// Whether a request of this agent may proceed now: `Ok(None)` yes, `Ok(Some(finding))`
    /// no, the agent is throttled and over its rate.
    ///
    /// The rate is counted in the store ([`Store::take_throttle_slot`]), so every process
    /// sharing the state (directory or database) shares one quota: an agent that is not throttled costs
    /// one indexed read, a throttled one a single `UPDATE` that takes a slot if one is
    /// free.
    pub fn admit(
        &self,
        tenant: &str,
        agent: &str,
        now_ms: i64,
    ) -> Result<Option<Finding>, StoreError> {
        Ok(
            match self
                .store
                .take_throttle_slot(tenant, agent, now_ms, self.per_minute)?
            {
                ThrottleCheck::OverRate { until_ms } => Some(Finding::new(
                    LayerName::Monitor,
                    "monitor.throttled",
                    Severity::Medium,
                    format!(
                        "this agent is throttled to {} requests per minute until {} and is over that rate",
                        self.config.throttle_per_minute,
                        audit::rfc3339(until_ms)
                    ),
                )),
                ThrottleCheck::NotThrottled | ThrottleCheck::Admitted { .. } => None,
            },
        )
    }

    /// The pure part: signals (counted against whom [`Blame::of`] says), detections
    /// against the given baselines and history, and the baselines with this run added.
    /// No I/O besides what `history` does.
    pub fn assess(
        &self,
        meta: &RequestMeta,
        outcome: &ExecOutcome,
        skill: &Baselines,
        agent: &Baselines,
        history: &dyn History,
        now_ms: i64,
    ) -> Result<Assessment, String> {
        let signals = Signals::from_outcome(outcome, now_ms).blamed_on(Blame::of(meta, outcome));
        let ctx = Context {
            skill,
            agent,
            history,
            min_samples: self.config.min_samples,
        };
        let hits = self.detections.evaluate(&signals, &ctx)?;
        let (mut skill, mut agent) = (*skill, *agent);
        if signals.status == Status::Ok && signals.ran() {
            for m in Metric::ALL {
                let v = metric_value(&signals, m);
                skill.update(m, v, self.config.min_samples);
                agent.update(m, v, self.config.min_samples);
            }
        }
        Ok(Assessment {
            signals,
            hits,
            skill,
            agent,
        })
    }

    /// Writes the intent record of the run `meta` describes, before it starts (see the
    /// audit trail's **fsync**, [`audit`]); `Ok(false)` when the store keeps none. Call
    /// [`sync_announced`](Self::sync_announced) while the run runs, and set
    /// [`RequestMeta::intent_synced`] when it succeeded: the execution record then needs
    /// no sync of its own.
    pub fn announce(&self, meta: &RequestMeta, now_ms: i64) -> Result<bool, StoreError> {
        self.store.announce(&audit::intent_record(meta, now_ms))
    }

    /// Makes the intents announced so far durable (one `fdatasync` of the trail).
    pub fn sync_announced(&self) -> Result<(), StoreError> {
        self.store.sync_announced()
    }

    /// Observes one execution now. See [`observe_at`](Self::observe_at).
    pub fn observe(
        &self,
        meta: &RequestMeta,
        outcome: &ExecOutcome,
    ) -> Result<Verdict, StoreError> {
        self.observe_at(meta, outcome, crate::signals::now_ms())
    }

    /// Observes one execution at `now_ms`: in one store transaction, reads the agent's
    /// baselines and history, evaluates the detections, acts (strikes, quarantine and
    /// throttle for what the agent is accountable for, see [`Blame`]; the skill's flag),
    /// writes the event, baselines, counters and the audit record, and commits.
    pub fn observe_at(
        &self,
        meta: &RequestMeta,
        outcome: &ExecOutcome,
        now_ms: i64,
    ) -> Result<Verdict, StoreError> {
        let (t, a, s) = (
            meta.tenant.as_str(),
            meta.agent.as_str(),
            meta.skill.as_str(),
        );
        let cfg = &self.config;
        self.store.transact(|tx| {
            let was_quarantined = tx.quarantine_of(a)?.is_some();
            let flagged_before = tx.skill_flag(&meta.digest)?;
            let skill_b = tx.baselines(t, a, s)?;
            let agent_b = tx.baselines(t, a, ALL_SKILLS)?;
            let history = tx.history(t, a, s, &meta.digest);
            let asm = self
                .assess(meta, outcome, &skill_b, &agent_b, &*history, now_ms)
                .map_err(StoreError::Db)?;
            drop(history);
            let blame = asm.signals.blame;
            let mut findings: Vec<Finding> = asm
                .hits
                .iter()
                .map(|h| Finding::new(LayerName::Monitor, &h.rule_id, h.severity, &h.message))
                .collect();
            // Strikes and throttles act on the agent: only for what it is accountable for.
            let on_agent = blame == Blame::Agent;
            // Strikes and quarantine.
            let mut strikes = 0;
            let striking: Vec<&Hit> = asm
                .hits
                .iter()
                .filter(|h| on_agent && h.action == Action::Quarantine)
                .collect();
            for h in &striking {
                tx.add_strike(t, a, now_ms, &h.rule_id, &meta.request_id, h.strikes)?;
                strikes += h.strikes;
            }
            let mut quarantined = false;
            if strikes > 0 && !was_quarantined {
                let since = now_ms - cfg.strike_window.as_millis() as i64;
                let total = tx.strikes_since(t, a, since)?;
                if total >= u64::from(cfg.quarantine_strikes) {
                    let reasons: Vec<&str> = striking.iter().map(|h| h.rule_id.as_str()).collect();
                    let reason = format!(
                        "{total} strikes in {} (last: {})",
                        units::format_duration(cfg.strike_window),
                        reasons.join(", ")
                    );
                    tx.quarantine(t, a, now_ms, &reason)?;
                    tx.count("skillgate_quarantines_total", "", 1.0)?;
                    quarantined = true;
                    findings.push(Finding::new(
                        LayerName::Monitor,
                        "monitor.quarantine",
                        Severity::Critical,
                        format!(
                            "agent quarantined: {reason}; the policy layer denies its requests until `skillgate monitor release`"
                        ),
                    ));
                }
            }
            // Throttle.
            let throttle_hit = asm
                .hits
                .iter()
                .find(|h| on_agent && h.action == Action::Throttle);
            if let Some(h) = throttle_hit {
                let until = now_ms + cfg.throttle_for.as_millis() as i64;
                tx.throttle(t, a, until, &h.rule_id)?;
                findings.push(Finding::new(
                    LayerName::Monitor,
                    "monitor.throttle",
                    Severity::Medium,
                    format!(
                        "agent throttled to {} requests per minute for {} ({})",
                        cfg.throttle_per_minute,
                        units::format_duration(cfg.throttle_for),
                        h.rule_id
                    ),
                ));
            }
            let throttled_until_ms = tx.throttled_until(t, a, now_ms)?;
            // The skill's flag: set by a `flag_skill` detection, shown while it stands.
            let mut skill_flagged = false;
            match &flagged_before {
                Some(flag) => findings.push(skill_flagged_finding(flag)),
                None => {
                    if let Some(h) = asm.hits.iter().find(|h| h.action == Action::FlagSkill) {
                        let reason = format!("{}: {}", h.rule_id, h.message);
                        tx.flag_skill(&meta.digest, s, now_ms, &reason)?;
                        tx.count("skillgate_skill_flags_total", "", 1.0)?;
                        skill_flagged = true;
                        findings.push(Finding::new(
                            LayerName::Monitor,
                            "monitor.flag_skill",
                            Severity::High,
                            format!(
                                "skill `{s}` (sha256 {}) flagged: {reason}; its blocks count against it, not against its callers; `skillgate monitor release --skill {}` clears the flag",
                                meta.digest, meta.digest
                            ),
                        ));
                    }
                }
            }
            // Baselines.
            if asm.skill != skill_b {
                tx.save_baselines(t, a, s, &asm.skill)?;
                tx.save_baselines(t, a, ALL_SKILLS, &asm.agent)?;
            }
            // The event.
            let sig = &asm.signals;
            let seq = tx.insert_event(&EventRow {
                request_id: &meta.request_id,
                ts_ms: now_ms,
                tenant: t,
                agent: a,
                skill: s,
                digest: &meta.digest,
                status: sig.status,
                exit_code: sig.exit_code,
                signal: sig.signal,
                wall_us: sig.wall.as_micros() as i64,
                cpu_us: sig.cpu.as_micros() as i64,
                rss_bytes: sig.rss_bytes as i64,
                output_bytes: sig.output_bytes() as i64,
                detections: asm.hits.len() as i64,
                blame,
            })?;
            if seq % 512 == 0 {
                let keep = cfg
                    .retention
                    .max(cfg.strike_window)
                    .max(self.detections.longest_window());
                tx.prune(now_ms - keep.as_millis() as i64, now_ms)?;
            }
            // Counters.
            tx.count("skillgate_executions_total", &metrics::label("status", sig.status.as_str()), 1.0)?;
            for f in findings.iter().chain(&outcome.findings) {
                let labels = format!("{},{}", metrics::label("layer", f.layer.as_str()), metrics::label("rule", &f.rule_id));
                tx.count("skillgate_findings_total", &labels, 1.0)?;
            }
            for h in &asm.hits {
                let labels = format!("{},{}", metrics::label("action", h.action.as_str()), metrics::label("rule", &h.rule_id));
                tx.count("skillgate_detections_total", &labels, 1.0)?;
            }
            for l in &outcome.layers {
                let secs = l.duration_us as f64 / 1e6;
                tx.observe("skillgate_layer_duration_seconds", &metrics::label("layer", l.name.as_str()), metrics::bucket_of(secs), secs)?;
            }
            if sig.ran() {
                let secs = sig.wall.as_secs_f64();
                tx.observe("skillgate_execution_duration_seconds", "", metrics::bucket_of(secs), secs)?;
            }
            // The audit record, last, so it is written only when everything else was.
            let mut all = findings.clone();
            all.extend(outcome.findings.iter().cloned());
            let record = audit::execution_record(
                meta,
                outcome,
                all,
                MonitorRecord {
                    was_quarantined,
                    detections: asm.hits.iter().map(|h| h.rule_id.clone()).collect(),
                    strikes,
                    quarantined,
                    throttled: throttle_hit.is_some()
                        || outcome.findings.iter().any(|f| f.rule_id == "monitor.throttled"),
                    blame,
                    skill_flagged: skill_flagged || flagged_before.is_some(),
                },
                now_ms,
            );
            if meta.intent_synced {
                tx.append_audit_after_intent(&record)?;
            } else {
                tx.append_audit(&record)?;
            }
            Ok(Verdict {
                findings,
                quarantined,
                skill_flagged,
                throttled_until_ms,
            })
        })
    }
}

/// The finding on every outcome of a flagged skill.
fn skill_flagged_finding(flag: &crate::store::SkillFlag) -> Finding {
    Finding::new(
        LayerName::Monitor,
        "monitor.skill_flagged",
        Severity::Medium,
        format!(
            "this skill (sha256 {}) is flagged since {}: {}",
            flag.digest,
            audit::rfc3339(flag.since_ms),
            flag.reason
        ),
    )
}

/// An in-memory [`History`] for one agent and skill (tests, benches, and callers that
/// evaluate detections without a store).
#[derive(Debug, Clone, Default)]
pub struct RecentEvents {
    /// `(ts_ms, skill matches, status)` of earlier requests, oldest first.
    pub events: Vec<(i64, bool, Status)>,
}

/// Every event it holds counts against the agent ([`Blame::Agent`]): it has no requests
/// blamed on the skill.
impl History for RecentEvents {
    fn skill_count_since(&self, _statuses: &[Status], _since_ms: i64) -> Result<u64, String> {
        Ok(0)
    }

    fn agent_count_since(&self, statuses: &[Status], since_ms: i64) -> Result<u64, String> {
        Ok(self
            .events
            .iter()
            .filter(|(ts, _, s)| *ts >= since_ms && (statuses.is_empty() || statuses.contains(s)))
            .count() as u64)
    }

    fn skill_recent_statuses(&self, n: usize) -> Result<Vec<Status>, String> {
        Ok(self
            .events
            .iter()
            .rev()
            .filter(|(_, same, _)| *same)
            .take(n)
            .map(|(_, _, s)| *s)
            .collect())
    }
}
