//! What the monitor reads off one execution: the request's identity and the outcome's
//! measurements, flattened into plain numbers the detections and baselines use.
use serde::{Deserialize, Serialize};
use skillgate_core::{ExecOutcome, ExecRequest, Language, LayerName, SandboxSpec, Status};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// What the monitor keeps of a request before handing it on: who asked for what, under
/// which spec. Captured on the way in, because the inner layers consume the request.
#[derive(Debug, Clone, Serialize)]
pub struct RequestMeta {
    /// The request id (hex).
    pub request_id: String,
    /// The agent's tenant.
    pub tenant: String,
    /// The agent's id.
    pub agent: String,
    /// Groups the caller asserted.
    pub groups: Vec<String>,
    /// The skill's name.
    pub skill: String,
    /// The skill's code digest (sha256 hex).
    pub digest: String,
    /// The skill's language.
    pub language: Language,
    /// The caller submitted the code itself (a bare script, or a folder no operator
    /// recorded), rather than calling a skill someone published. Blocks of submitted code
    /// count against the agent; blocks a published skill's own schema or code causes count
    /// against the skill (see [`Blame`]). [`RequestMeta::of`] takes every skill as
    /// submitted; [`RequestMeta::published`] says otherwise.
    pub submitted_code: bool,
    /// The spec the executor was given, as the pipeline's innermost end recorded it
    /// ([`ExecutorSpec`](skillgate_core::ExecutorSpec)); `None` when the request never
    /// reached the executor (denied, blocked, refused). [`MonitorLayer`](crate::MonitorLayer)
    /// fills it on the way back.
    pub executor_spec: Option<SandboxSpec>,
    /// The run's intent record is durable in the audit trail (see
    /// [`Monitor::announce`](crate::Monitor::announce)): its execution record needs no
    /// sync of its own. [`MonitorLayer`](crate::MonitorLayer) sets it.
    pub intent_synced: bool,
}

impl RequestMeta {
    /// Captures what the monitor needs from `req`, its skill taken as the caller's own
    /// submitted code.
    pub fn of(req: &ExecRequest) -> Self {
        RequestMeta {
            request_id: req.id.to_string(),
            tenant: req.caller.tenant.clone(),
            agent: req.caller.agent_id.clone(),
            groups: req.caller.groups.clone(),
            skill: req.skill.name.clone(),
            digest: req.skill.digest.clone(),
            language: req.skill.language,
            submitted_code: true,
            executor_spec: None,
            intent_synced: false,
        }
    }

    /// Marks the skill as published by the operator (`true`) or submitted by the caller.
    pub fn published(mut self, published: bool) -> Self {
        self.submitted_code = !published;
        self
    }
}

/// Who an execution's outcome counts against: whose strikes, bursts and throttles it
/// feeds.
///
/// A request blocked by the skill's own input schema, or by the pre-scan of a published
/// skill's code, is the skill's doing: its author could otherwise get every agent that
/// calls the skill quarantined. Such blocks count against the skill (by code digest),
/// never against the calling agent. Everything else counts against the agent, including
/// every block of code the agent submitted itself.
///
/// ```
/// use skillgate_monitor::{RequestMeta, signals::Blame};
/// use skillgate_core::{Caller, ExecOutcome, ExecRequest, Language, LayerName, Skill, Status};
/// let skill = Skill::builder("s", Language::Python, b"".to_vec()).build();
/// let req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
/// let meta = RequestMeta::of(&req).published(true);
/// let mut out = ExecOutcome::rejected(Status::Blocked, vec![]);
/// out.record_layer(LayerName::Input, Default::default(), vec![]);
/// assert_eq!(Blame::of(&meta, &out), Blame::Skill);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Blame {
    /// The calling agent.
    #[default]
    Agent,
    /// The skill (its code digest), whoever called it.
    Skill,
}

impl Blame {
    /// The lowercase name (as stored).
    pub fn as_str(self) -> &'static str {
        match self {
            Blame::Agent => "agent",
            Blame::Skill => "skill",
        }
    }

    /// Whom `outcome` counts against. A block is the skill's when the stage that
    /// rejected the request (the innermost layer timing on a rejected outcome) is the
    /// input schema gate or the pre-scan, and the code is a published skill's rather than
    /// submitted by the caller.
    pub fn of(meta: &RequestMeta, outcome: &ExecOutcome) -> Blame {
        if meta.submitted_code || outcome.status != Status::Blocked {
            return Blame::Agent;
        }
        match outcome.layers.last().map(|l| l.name) {
            Some(LayerName::Input | LayerName::Prescan) => Blame::Skill,
            _ => Blame::Agent,
        }
    }
}

/// The measurements of one execution, as the detections and baselines see them.
#[derive(Debug, Clone, PartialEq)]
pub struct Signals {
    /// When the outcome was observed, milliseconds since the Unix epoch.
    pub ts_ms: i64,
    /// The overall status.
    pub status: Status,
    /// The exit code, when the process exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Wall-clock time of the run.
    pub wall: Duration,
    /// User plus system CPU time.
    pub cpu: Duration,
    /// Peak resident memory in bytes.
    pub rss_bytes: u64,
    /// Captured stdout bytes.
    pub stdout_bytes: u64,
    /// Captured stderr bytes.
    pub stderr_bytes: u64,
    /// Artifact bytes, all files together.
    pub artifact_bytes: u64,
    /// stdout passed its cap.
    pub stdout_truncated: bool,
    /// stderr passed its cap.
    pub stderr_truncated: bool,
    /// Number of findings per layer (only layers with findings), outermost first.
    pub findings_by_layer: Vec<(LayerName, usize)>,
    /// Whom the outcome counts against (default: the agent; see [`Blame::of`]).
    pub blame: Blame,
}

impl Signals {
    /// Reads the signals off an outcome observed at `ts_ms`.
    pub fn from_outcome(outcome: &ExecOutcome, ts_ms: i64) -> Self {
        let mut findings_by_layer: Vec<(LayerName, usize)> = Vec::new();
        for f in &outcome.findings {
            match findings_by_layer.iter_mut().find(|(l, _)| *l == f.layer) {
                Some((_, n)) => *n += 1,
                None => findings_by_layer.push((f.layer, 1)),
            }
        }
        Signals {
            ts_ms,
            status: outcome.status,
            exit_code: outcome.exit_code,
            signal: outcome.signal,
            wall: outcome.usage.wall,
            cpu: outcome.usage.user_cpu + outcome.usage.system_cpu,
            rss_bytes: outcome.usage.max_rss_bytes,
            stdout_bytes: outcome.stdout.len() as u64,
            stderr_bytes: outcome.stderr.len() as u64,
            artifact_bytes: outcome.artifacts.iter().map(|a| a.size).sum(),
            stdout_truncated: outcome.stdout_truncated,
            stderr_truncated: outcome.stderr_truncated,
            findings_by_layer,
            blame: Blame::Agent,
        }
    }

    /// The same signals, counted against `blame`.
    pub fn blamed_on(mut self, blame: Blame) -> Self {
        self.blame = blame;
        self
    }

    /// All output together: stdout, stderr and artifacts.
    pub fn output_bytes(&self) -> u64 {
        self.stdout_bytes + self.stderr_bytes + self.artifact_bytes
    }

    /// Findings the given layer reported.
    pub fn findings_of(&self, layer: LayerName) -> usize {
        self.findings_by_layer
            .iter()
            .find(|(l, _)| *l == layer)
            .map_or(0, |(_, n)| *n)
    }

    /// The skill actually ran (it was not rejected before the executor).
    pub fn ran(&self) -> bool {
        self.exit_code.is_some() || self.signal.is_some() || !self.wall.is_zero()
    }
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillgate_core::{Artifact, Finding, Severity};

    #[test]
    fn counts_findings_per_layer_and_sums_output() {
        let mut out = ExecOutcome {
            status: Status::Ok,
            exit_code: Some(0),
            stdout: b"abc".to_vec(),
            stderr: b"de".to_vec(),
            ..Default::default()
        };
        out.artifacts.push(Artifact {
            name: "a".into(),
            raw_name: None,
            size: 10,
            sha256: String::new(),
            content: vec![],
        });
        for rule in ["a", "b"] {
            out.findings
                .push(Finding::new(LayerName::Secrets, rule, Severity::High, "x"));
        }
        out.findings
            .push(Finding::new(LayerName::Prescan, "p", Severity::Low, "x"));
        let s = Signals::from_outcome(&out, 5);
        assert_eq!(s.output_bytes(), 15);
        assert_eq!(s.findings_of(LayerName::Secrets), 2);
        assert_eq!(s.findings_of(LayerName::Prescan), 1);
        assert_eq!(s.findings_of(LayerName::Policy), 0);
        assert!(s.ran());
        assert!(!Signals::from_outcome(&ExecOutcome::rejected(Status::Denied, vec![]), 0).ran());
    }
}
