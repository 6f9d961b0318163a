use crate::{Caller, Finding, SandboxSpec, Skill};
use serde::Serialize;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// A process-unique, roughly time-ordered request id (for audit records and logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct RequestId(pub u128);

impl RequestId {
    /// A new id: microseconds since the epoch in the high bits, the process id and a
    /// process-wide counter in the low bits, so ids from concurrent processes do not collide.
    pub fn generate() -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let micros = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_micros())
            .unwrap_or(0);
        let seq = COUNTER.fetch_add(1, Ordering::Relaxed) as u128;
        let pid = std::process::id() as u128;
        RequestId((micros << 64) | (pid << 32) | (seq & 0xffff_ffff))
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// One execution request as it travels through the pipeline.
///
/// Layers read it, add what they decide (the [`SandboxSpec`], findings, typed values in
/// [`extensions`](Self::extensions)) and pass it on.
///
/// ```
/// use skillgate_core::{Caller, ExecRequest, Language, Skill};
/// #[derive(Clone)]
/// struct PolicyDecision(&'static str);
/// let skill = Skill::builder("s", Language::JavaScript, b"0".to_vec()).build();
/// let mut req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::Value::Null);
/// req.extensions.insert(PolicyDecision("allow"));
/// assert_eq!(req.extensions.get::<PolicyDecision>().unwrap().0, "allow");
/// ```
#[derive(Debug, Clone)]
pub struct ExecRequest {
    /// Unique id of this request.
    pub id: RequestId,
    /// Who asks.
    pub caller: Caller,
    /// What to run.
    pub skill: Arc<Skill>,
    /// The input JSON, written to the skill's stdin.
    pub input: serde_json::Value,
    /// The sandbox the layers decided so far (defaults until the isolation layer runs).
    pub spec: SandboxSpec,
    /// Findings of the layers the request already passed.
    pub findings: Vec<Finding>,
    /// Typed values layers attach for the layers and the executor below them.
    pub extensions: http::Extensions,
}

impl ExecRequest {
    /// A request with a default spec and no findings.
    pub fn new(caller: Caller, skill: impl Into<Arc<Skill>>, input: serde_json::Value) -> Self {
        ExecRequest {
            id: RequestId::generate(),
            caller,
            skill: skill.into(),
            input,
            spec: SandboxSpec::default(),
            findings: Vec::new(),
            extensions: http::Extensions::new(),
        }
    }
}

/// A slot for the spec the executor was given, for layers outside to read on the way
/// back (the monitor records it in the audit trail: the limits after clamping, the
/// seccomp profile and network the layers decided, not the defaults the request entered
/// with).
///
/// An outer layer puts one in the request's [`extensions`](ExecRequest::extensions) and
/// keeps a clone; the pipeline's innermost end (skillgate's `PipelineBuilder`) records
/// the request's spec in it just before the executor is called. It stays empty when the
/// request never reaches the executor.
///
/// ```
/// use skillgate_core::{Caller, ExecRequest, ExecutorSpec, Language, Skill};
/// let probe = ExecutorSpec::default();
/// let skill = Skill::builder("s", Language::Python, b"".to_vec()).build();
/// let mut req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
/// req.extensions.insert(probe.clone());
/// assert!(probe.get().is_none());
/// req.spec.limits.memory_bytes = 64 << 20;
/// ExecutorSpec::record(&req);
/// assert_eq!(probe.get().unwrap().limits.memory_bytes, 64 << 20);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ExecutorSpec(Arc<OnceLock<SandboxSpec>>);

impl ExecutorSpec {
    /// Records `req`'s spec in the slot it carries, if it carries one (the first
    /// recording stays).
    pub fn record(req: &ExecRequest) {
        if let Some(slot) = req.extensions.get::<ExecutorSpec>() {
            let _ = slot.0.set(req.spec.clone());
        }
    }

    /// The recorded spec, if the request reached the executor.
    pub fn get(&self) -> Option<&SandboxSpec> {
        self.0.get()
    }
}
