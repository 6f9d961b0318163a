//! Detections as data: `rules/monitor/*.toml`, each `[[detection]]` with an id, a
//! severity, an action, a message and a `when` condition, in the spirit of Falco rules.
//!
//! ```
//! use skillgate_monitor::detections::Detections;
//! let d = Detections::from_toml(r#"
//!     [[detection]]
//!     id = "monitor.seccomp_kill"
//!     severity = "critical"
//!     action = "quarantine"
//!     message = "the sandbox stopped a forbidden action"
//!     when = { kind = "status", any_of = ["security_violation"] }
//! "#, "inline").unwrap();
//! assert_eq!(d.rules()[0].id, "monitor.seccomp_kill");
//! assert!(Detections::from_toml("[[detection]]\nid = 1", "bad.toml").is_err());
//! ```
use crate::baseline::{Baselines, Metric};
use crate::signals::{Blame, Signals};
use serde::Deserialize;
use skillgate_core::{LayerName, Severity, Status, units};
use std::path::Path;
use std::time::Duration;

/// What a detection does when it fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A finding on the outcome and an event in the audit trail and metrics.
    Alert,
    /// As alert, and the agent's request rate is limited for a while.
    Throttle,
    /// As alert, and a strike: after the configured number of strikes within the
    /// configured window the agent is quarantined (the policy layer then denies it).
    Quarantine,
    /// As alert, and the skill (its code digest) is flagged: every later report of it
    /// carries a `monitor.skill_flagged` finding and `skillgate monitor status` lists it,
    /// until an operator clears the flag. A flag does not deny the skill.
    FlagSkill,
}

impl Action {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Alert => "alert",
            Action::Throttle => "throttle",
            Action::Quarantine => "quarantine",
            Action::FlagSkill => "flag_skill",
        }
    }
}

/// Which baseline a resource detection compares against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// This agent's runs of this skill.
    #[default]
    Skill,
    /// All of this agent's runs.
    Agent,
}

/// When a detection fires.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Condition {
    /// The outcome's status is one of these.
    Status {
        /// The statuses.
        any_of: Vec<Status>,
    },
    /// The process exited with a non-zero code (the platform treats it as a sandbox alert).
    NonzeroExit,
    /// A layer reported at least `min` findings.
    Findings {
        /// The layer.
        layer: LayerName,
        /// How many findings at least (default 1).
        #[serde(default = "one")]
        min: usize,
    },
    /// stdout or stderr reached its cap and was truncated.
    OutputAtCap,
    /// At least `count` requests within `window` ended in one of the statuses (this
    /// request included), counting those blamed on `against`: this agent's requests it
    /// is accountable for (default), or the requests of any agent that this skill (its
    /// code digest) is to blame for. Fires only for a request blamed on `against`.
    Burst {
        /// The statuses counted.
        statuses: Vec<Status>,
        /// How many make a burst.
        count: u64,
        /// The window.
        #[serde(with = "units::duration")]
        window: Duration,
        /// Whose requests are counted: `agent` (default) or `skill`.
        #[serde(default)]
        against: Blame,
    },
    /// This agent's last `count` runs of this skill it is accountable for all ended in
    /// one of the statuses.
    Streak {
        /// The statuses.
        statuses: Vec<Status>,
        /// How many in a row.
        count: u64,
    },
    /// This agent's requests within `window` are at least `min_requests` and `factor`
    /// times its average per `window` over the last `baseline_window`.
    RateSpike {
        /// The short window.
        #[serde(with = "units::duration")]
        window: Duration,
        /// The long window the average is taken over.
        #[serde(with = "units::duration")]
        baseline_window: Duration,
        /// How many times the average.
        factor: f64,
        /// Fewer requests than this in `window` never fire.
        min_requests: u64,
    },
    /// A resource metric of a run is `factor` times its baseline and `min_z` robust
    /// deviations above it, once the baseline has `min_samples` samples.
    AboveBaseline {
        /// The metric.
        metric: Metric,
        /// Ratio to the baseline mean.
        factor: f64,
        /// Robust z-score (default 4).
        #[serde(default = "four")]
        min_z: f64,
        /// The baseline compared against (default `skill`).
        #[serde(default)]
        scope: Scope,
        /// Samples before scoring; default: the monitor's `min_samples`.
        #[serde(default)]
        min_samples: Option<u64>,
    },
}

fn one() -> usize {
    1
}
fn four() -> f64 {
    4.0
}

/// One detection rule.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Unique id, e.g. `monitor.denial_burst` (the finding's rule id and metric label).
    pub id: String,
    /// What it detects and why it matters.
    #[serde(default)]
    pub description: String,
    /// The finding's severity.
    pub severity: Severity,
    /// What to do.
    pub action: Action,
    /// Strikes towards quarantine when the action is `quarantine` (default 1).
    #[serde(default = "one_u32")]
    pub strikes: u32,
    /// The headline; the explanation with the numbers follows it.
    pub message: String,
    /// The condition.
    pub when: Condition,
}

fn one_u32() -> u32 {
    1
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    #[serde(default)]
    detection: Vec<Rule>,
}

/// A detection rule file or set that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("monitor rules {origin}: {message}")]
pub struct RulesError {
    /// The file (or `inline`).
    pub origin: String,
    /// What is wrong.
    pub message: String,
}

/// The detection rules shipped in `rules/monitor/`, compiled in.
pub const DEFAULT_RULES: &str = include_str!("../../../rules/monitor/default.toml");

/// What a history of past executions answers; the store answers from its events table
/// inside the write transaction, so concurrent processes see each other's requests.
pub trait History {
    /// How many of this agent's earlier requests since `since_ms` that it is accountable
    /// for ([`Blame::Agent`]) ended in one of `statuses`; with `statuses` empty, all its
    /// earlier requests, whoever is to blame (its request rate).
    fn agent_count_since(&self, statuses: &[Status], since_ms: i64) -> Result<u64, String>;
    /// How many earlier requests of any agent since `since_ms` that this skill (its code
    /// digest) is to blame for ([`Blame::Skill`]) ended in one of `statuses` (all of them
    /// when `statuses` is empty).
    fn skill_count_since(&self, statuses: &[Status], since_ms: i64) -> Result<u64, String>;
    /// The statuses of this agent's last `n` earlier runs of this skill that it is
    /// accountable for, newest first.
    fn skill_recent_statuses(&self, n: usize) -> Result<Vec<Status>, String>;
}

/// What a detection sees besides the execution's own signals.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    /// Baselines of this agent's runs of this skill (before this run).
    pub skill: &'a Baselines,
    /// Baselines of all this agent's runs (before this run).
    pub agent: &'a Baselines,
    /// Earlier requests.
    pub history: &'a dyn History,
    /// Default samples before a baseline is scored.
    pub min_samples: u64,
}

/// A detection that fired, with its human explanation.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The rule id.
    pub rule_id: String,
    /// Its severity.
    pub severity: Severity,
    /// Its action.
    pub action: Action,
    /// Strikes it counts (quarantine action).
    pub strikes: u32,
    /// Headline and explanation, e.g. "resource use far above baseline: wall time 38×
    /// this skill's baseline (412ms vs 10ms over 57 runs)".
    pub message: String,
}

/// A validated set of detection rules.
#[derive(Debug, Clone, Default)]
pub struct Detections {
    rules: Vec<Rule>,
}

impl Detections {
    /// The rules shipped with skillgate.
    pub fn builtin() -> Self {
        Self::from_toml(DEFAULT_RULES, "rules/monitor/default.toml")
            .unwrap_or_else(|e| unreachable!("the built-in monitor rules are tested: {e}"))
    }

    /// Parses and validates one rule file's text.
    pub fn from_toml(text: &str, origin: &str) -> Result<Self, RulesError> {
        let err = |message: String| RulesError {
            origin: origin.to_string(),
            message,
        };
        let file: RuleFile =
            toml::from_str(text).map_err(|e| err(e.to_string().trim_end().into()))?;
        let mut d = Detections::default();
        for rule in file.detection {
            d.push(rule).map_err(err)?;
        }
        Ok(d)
    }

    /// Loads every `*.toml` rule file in a directory, in name order. They replace the
    /// built-in rules, unless the directory's `pack.toml` says `extends = "builtin"`
    /// ([`PackMeta`](skillgate_core::PackMeta)): then they add to them (an id used twice
    /// is an error).
    pub fn load_dir(dir: &Path) -> Result<Self, RulesError> {
        let origin = dir.display().to_string();
        let meta_path = dir.join(skillgate_core::PACK_FILE);
        let meta: skillgate_core::PackMeta = match std::fs::read_to_string(&meta_path) {
            Ok(text) => toml::from_str(&text).map_err(|e| RulesError {
                origin: meta_path.display().to_string(),
                message: e.to_string().trim_end().into(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Default::default(),
            Err(e) => {
                return Err(RulesError {
                    origin: meta_path.display().to_string(),
                    message: format!("cannot read: {e}"),
                });
            }
        };
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| RulesError {
                origin: origin.clone(),
                message: format!("cannot read the directory: {e}"),
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .filter(|p| p.file_name() != Some(skillgate_core::PACK_FILE.as_ref()))
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(RulesError {
                origin,
                message: "no *.toml rule files".into(),
            });
        }
        let mut all = if meta.extends_builtin() {
            Detections::builtin()
        } else {
            Detections::default()
        };
        for f in files {
            let o = f.display().to_string();
            let text = std::fs::read_to_string(&f).map_err(|e| RulesError {
                origin: o.clone(),
                message: format!("cannot read: {e}"),
            })?;
            for rule in Self::from_toml(&text, &o)?.rules {
                all.push(rule).map_err(|message| RulesError {
                    origin: o.clone(),
                    message,
                })?;
            }
        }
        Ok(all)
    }

    fn push(&mut self, rule: Rule) -> Result<(), String> {
        validate(&rule)?;
        if self.rules.iter().any(|r| r.id == rule.id) {
            return Err(format!("duplicate detection id `{}`", rule.id));
        }
        self.rules.push(rule);
        Ok(())
    }

    /// The rules, in file order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The longest window any rule looks back over (events older than this are not needed).
    pub fn longest_window(&self) -> Duration {
        self.rules
            .iter()
            .map(|r| match &r.when {
                Condition::Burst { window, .. } => *window,
                Condition::RateSpike {
                    baseline_window, ..
                } => *baseline_window,
                _ => Duration::ZERO,
            })
            .max()
            .unwrap_or_default()
    }

    /// Evaluates every rule against one execution; the hits are in rule order.
    pub fn evaluate(&self, sig: &Signals, ctx: &Context<'_>) -> Result<Vec<Hit>, String> {
        let mut hits = Vec::new();
        for rule in &self.rules {
            if let Some(why) = explain(&rule.when, sig, ctx)? {
                hits.push(Hit {
                    rule_id: rule.id.clone(),
                    severity: rule.severity,
                    action: rule.action,
                    strikes: rule.strikes,
                    message: format!("{}: {why}", rule.message),
                });
            }
        }
        Ok(hits)
    }
}

fn validate(rule: &Rule) -> Result<(), String> {
    let id = &rule.id;
    if id.is_empty()
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    {
        return Err(format!(
            "detection id `{id}` must be non-empty ASCII letters, digits, `.`, `_` or `-`"
        ));
    }
    if rule.message.trim().is_empty() {
        return Err(format!("detection `{id}`: `message` is empty"));
    }
    if rule.strikes == 0 {
        return Err(format!("detection `{id}`: `strikes` must be at least 1"));
    }
    let bad = |what: &str| Err(format!("detection `{id}`: {what}"));
    match &rule.when {
        Condition::Status { any_of } if any_of.is_empty() => bad("`any_of` is empty"),
        Condition::Findings { min: 0, .. } => bad("`min` must be at least 1"),
        Condition::Burst {
            statuses,
            count,
            window,
            against,
        } => {
            if *against == Blame::Skill
                && matches!(rule.action, Action::Quarantine | Action::Throttle)
            {
                bad(
                    "a burst `against = \"skill\"` counts what the skill is to blame for; it cannot throttle or quarantine the agent (use `flag_skill` or `alert`)",
                )
            } else if statuses.is_empty() {
                bad("`statuses` is empty")
            } else if *count < 2 {
                bad("a burst needs `count` of at least 2")
            } else if window.is_zero() {
                bad("`window` must be longer than 0")
            } else {
                Ok(())
            }
        }
        Condition::Streak { statuses, count } => {
            if statuses.is_empty() {
                bad("`statuses` is empty")
            } else if !(2..=1000).contains(count) {
                bad("a streak needs `count` between 2 and 1000")
            } else {
                Ok(())
            }
        }
        Condition::RateSpike {
            window,
            baseline_window,
            factor,
            ..
        } => {
            if window.is_zero() || baseline_window <= window {
                bad("`baseline_window` must be longer than `window`, and `window` longer than 0")
            } else if !(factor.is_finite() && *factor > 1.0) {
                bad("`factor` must be a number above 1")
            } else {
                Ok(())
            }
        }
        Condition::AboveBaseline { factor, min_z, .. } => {
            if !(factor.is_finite() && *factor > 1.0) {
                bad("`factor` must be a number above 1")
            } else if !(min_z.is_finite() && *min_z >= 0.0) {
                bad("`min_z` must be a number of at least 0")
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

fn statuses_text(statuses: &[Status]) -> String {
    statuses
        .iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join("/")
}

fn window_text(d: Duration) -> String {
    units::format_duration(d)
}

fn explain(cond: &Condition, sig: &Signals, ctx: &Context<'_>) -> Result<Option<String>, String> {
    Ok(match cond {
        Condition::Status { any_of } => any_of
            .contains(&sig.status)
            .then(|| format!("status {}", sig.status)),
        Condition::NonzeroExit => match sig.exit_code {
            Some(code) if code != 0 => Some(format!("exit code {code}")),
            _ => None,
        },
        Condition::Findings { layer, min } => {
            let n = sig.findings_of(*layer);
            (n >= *min).then(|| format!("{n} {layer} finding{}", if n == 1 { "" } else { "s" }))
        }
        Condition::OutputAtCap => {
            let which: Vec<&str> = [
                (sig.stdout_truncated, "stdout"),
                (sig.stderr_truncated, "stderr"),
            ]
            .into_iter()
            .filter_map(|(t, n)| t.then_some(n))
            .collect();
            (!which.is_empty())
                .then(|| format!("{} reached its cap and was truncated", which.join(" and ")))
        }
        Condition::Burst {
            statuses,
            count,
            window,
            against,
        } => {
            if !statuses.contains(&sig.status) || sig.blame != *against {
                return Ok(None);
            }
            let since = sig.ts_ms - window.as_millis() as i64;
            let (earlier, whose) = match against {
                Blame::Agent => (
                    ctx.history.agent_count_since(statuses, since)?,
                    "for this agent",
                ),
                Blame::Skill => (
                    ctx.history.skill_count_since(statuses, since)?,
                    "caused by this skill (any caller)",
                ),
            };
            let n = earlier + 1;
            (n >= *count).then(|| {
                format!(
                    "{n} {} requests {whose} in {}",
                    statuses_text(statuses),
                    window_text(*window)
                )
            })
        }
        Condition::Streak { statuses, count } => {
            if !statuses.contains(&sig.status) || sig.blame != Blame::Agent {
                return Ok(None);
            }
            let need = (*count - 1) as usize;
            let recent = ctx.history.skill_recent_statuses(need)?;
            (recent.len() == need && recent.iter().all(|s| statuses.contains(s))).then(|| {
                format!(
                    "{count} {} in a row for this skill",
                    statuses_text(statuses)
                )
            })
        }
        Condition::RateSpike {
            window,
            baseline_window,
            factor,
            min_requests,
        } => {
            let recent = ctx
                .history
                .agent_count_since(&[], sig.ts_ms - window.as_millis() as i64)?
                + 1;
            if recent < *min_requests {
                return Ok(None);
            }
            let long = ctx
                .history
                .agent_count_since(&[], sig.ts_ms - baseline_window.as_millis() as i64)?
                + 1;
            // The average per short window over the long one, without the short window
            // itself, so the spike does not raise its own baseline.
            let windows = baseline_window.as_secs_f64() / window.as_secs_f64();
            let before = long.saturating_sub(recent) as f64;
            if before == 0.0 {
                // No history before the short window: nothing to spike above.
                return Ok(None);
            }
            let avg = (before / (windows - 1.0)).max(1.0);
            let ratio = recent as f64 / avg;
            (ratio >= *factor).then(|| {
                format!(
                    "{recent} requests in {}, {ratio:.1}× this agent's average of {avg:.1} per {} over the last {}",
                    window_text(*window),
                    window_text(*window),
                    window_text(*baseline_window)
                )
            })
        }
        Condition::AboveBaseline {
            metric,
            factor,
            min_z,
            scope,
            min_samples,
        } => {
            if !sig.ran() {
                return Ok(None);
            }
            let base = match scope {
                Scope::Skill => ctx.skill,
                Scope::Agent => ctx.agent,
            };
            let need = min_samples.unwrap_or(ctx.min_samples);
            let value = metric_value(sig, *metric);
            let d = base.deviation(*metric, value);
            (d.samples >= need && d.ratio >= *factor && d.z >= *min_z).then(|| {
                format!(
                    "{} {:.0}× {}'s baseline ({} vs {} over {} runs)",
                    metric.label(),
                    d.ratio,
                    match scope {
                        Scope::Skill => "this skill",
                        Scope::Agent => "this agent",
                    },
                    metric.format(d.value),
                    metric.format(d.mean),
                    d.samples
                )
            })
        }
    })
}

/// The value of `metric` in `sig`, in the metric's base unit.
pub fn metric_value(sig: &Signals, metric: Metric) -> f64 {
    match metric {
        Metric::Wall => sig.wall.as_secs_f64(),
        Metric::Cpu => sig.cpu.as_secs_f64(),
        Metric::Memory => sig.rss_bytes as f64,
        Metric::Output => sig.output_bytes() as f64,
    }
}
