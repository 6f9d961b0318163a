//! Layer 3, isolation: decides the sandbox a run gets and refuses one the executor cannot
//! enforce.
//!
//! The limits are computed in three steps:
//!
//! 1. the configured defaults (`[limits]`);
//! 2. what the skill asks for (its `LimitOverrides`), then what the caller asks for
//!    (`skillgate run --timeout/--memory`, or a [`RequestedLimits`] extension), each
//!    replacing the value before it;
//! 3. clamped to the maxima: `[isolation.max]` for everyone and
//!    `[isolation.tenants.<id>.max]` for the caller's tenant. A request is never raised
//!    past a maximum; each clamp is reported as a low-severity finding. A key left out of
//!    `[isolation.max]` is capped at its `[limits]` default ([`Maxima::or_defaults`]): a
//!    skill or caller can ask for less than the default, never more, unless the operator
//!    raises the ceiling.
//!
//! The skill's named runtime (see [`crate::runtimes`]) is resolved next: its interpreter,
//! its read-only paths and its environment join the spec; a runtime that cannot be used
//! (unknown, another language, not installed, changed since install) refuses the run as
//! `error` with an `isolation.runtime` finding naming the fix.
//!
//! The spec (limits, runtime tier, extra read-only paths) is recorded on the request,
//! then checked against the executor's [`Capabilities`]: anything it cannot enforce makes
//! the outcome `error`, with one `isolation` finding per missing capability, and nothing
//! runs. An operator's statement that the remote side enforces what the executor does not
//! (`[executor.statement]`, see [`OperatorStatement`]) fills those gaps it names: a run
//! that needs it proceeds, with the statement recorded in its spec (`relied_on`, so in
//! the audit trail) and an `isolation.operator_statement` finding in its report.
use serde::Deserialize;
use skillgate_core::{
    Capabilities, Decide, DecideService, ExecRequest, Finding, LayerName, LimitOverrides, Limits,
    OperatorStatement, Rejection, RuntimeTier, Severity, Status, Unenforceable, units,
};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tower::Layer;

/// Limits a caller asks for, attached to `ExecRequest::extensions`; clamped like the
/// skill's own requests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestedLimits(pub LimitOverrides);

/// Upper bounds on what skills and callers may ask for. In `[isolation.max]` an unset key
/// means the `[limits]` default (see [`Maxima::or_defaults`]); in a tenant's maxima it
/// means no bound beyond the global one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Maxima {
    /// Longest wall clock.
    #[serde(with = "units::opt_duration")]
    pub wall_timeout: Option<Duration>,
    /// Most CPU time.
    #[serde(with = "units::opt_duration")]
    pub cpu_time: Option<Duration>,
    /// Most memory, in bytes.
    #[serde(with = "units::opt_size")]
    pub memory_bytes: Option<u64>,
    /// Most processes and threads.
    pub pids: Option<u32>,
    /// Largest file.
    #[serde(with = "units::opt_size")]
    pub file_size_bytes: Option<u64>,
}

impl Maxima {
    /// These maxima with every unset key filled from `defaults`, so that what is not
    /// bounded explicitly cannot be raised past its default.
    ///
    /// ```
    /// use skillgate::isolation::Maxima;
    /// use skillgate::Limits;
    /// use std::time::Duration;
    /// let max = Maxima { wall_timeout: Some(Duration::from_secs(60)), ..Default::default() };
    /// let filled = max.or_defaults(&Limits::default());
    /// assert_eq!(filled.wall_timeout, Some(Duration::from_secs(60)));
    /// assert_eq!(filled.memory_bytes, Some(Limits::default().memory_bytes));
    /// ```
    pub fn or_defaults(self, defaults: &Limits) -> Maxima {
        Maxima {
            wall_timeout: self.wall_timeout.or(Some(defaults.wall_timeout)),
            cpu_time: self.cpu_time.or(defaults.cpu_time),
            memory_bytes: self.memory_bytes.or(Some(defaults.memory_bytes)),
            pids: self.pids.or(Some(defaults.pids)),
            file_size_bytes: self.file_size_bytes.or(Some(defaults.file_size_bytes)),
        }
    }
}

/// One tenant's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TenantIsolation {
    /// The tenant's maxima (applied together with the global ones: the lower wins).
    pub max: Maxima,
}

/// `[isolation]` in `skillgate.toml`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IsolationConfig {
    /// The least isolation every run needs (`namespace` by default; `process` only for
    /// trusted code with `[executor] kind = "process"`).
    pub runtime: RuntimeTier,
    /// Host paths made visible read-only in every run (a virtualenv, a data set).
    pub read_only_paths: Vec<PathBuf>,
    /// Maxima for everyone; an unset key is capped at its `[limits]` default.
    pub max: Maxima,
    /// Per-tenant maxima, keyed by the caller's tenant id.
    pub tenants: BTreeMap<String, TenantIsolation>,
}

impl Default for IsolationConfig {
    fn default() -> Self {
        IsolationConfig {
            runtime: RuntimeTier::Namespace,
            read_only_paths: Vec::new(),
            max: Maxima::default(),
            tenants: BTreeMap::new(),
        }
    }
}

/// Computes a run's limits: defaults, then the skill's and the caller's requests, clamped
/// to the maxima. Returns the limits and one finding per clamp.
///
/// ```
/// use skillgate::isolation::{compute_limits, Maxima};
/// use skillgate::{LimitOverrides, Limits};
/// use std::time::Duration;
/// let skill = LimitOverrides { wall_timeout: Some(Duration::from_secs(60)), ..Default::default() };
/// let max = Maxima { wall_timeout: Some(Duration::from_secs(30)), ..Default::default() };
/// let (limits, clamps) = compute_limits(&Limits::default(), &[skill], &[max]);
/// assert_eq!(limits.wall_timeout, Duration::from_secs(30));
/// assert_eq!(clamps.len(), 1);
/// ```
pub fn compute_limits(
    defaults: &Limits,
    requests: &[LimitOverrides],
    maxima: &[Maxima],
) -> (Limits, Vec<Finding>) {
    let mut l = *defaults;
    for r in requests {
        if let Some(v) = r.wall_timeout {
            l.wall_timeout = v;
        }
        if let Some(v) = r.cpu_time {
            l.cpu_time = Some(v);
        }
        if let Some(v) = r.memory_bytes {
            l.memory_bytes = v;
        }
        if let Some(v) = r.pids {
            l.pids = v;
        }
        if let Some(v) = r.file_size_bytes {
            l.file_size_bytes = v;
        }
    }
    let mut clamps = Vec::new();
    let mut note = |what: &str, asked: String, max: String| {
        clamps.push(Finding::new(
            LayerName::Isolation,
            "isolation.clamped",
            Severity::Low,
            format!("{what}: {asked} asked, clamped to the maximum {max}"),
        ));
    };
    let dur = units::format_duration;
    let size = units::format_size;
    for m in maxima {
        if let Some(max) = m.wall_timeout
            && l.wall_timeout > max
        {
            note("wall-clock limit", dur(l.wall_timeout), dur(max));
            l.wall_timeout = max;
        }
        if let Some(max) = m.cpu_time {
            match l.cpu_time {
                Some(c) if c <= max => {}
                asked => {
                    let a = asked.map_or("no limit".to_string(), dur);
                    note("cpu-time limit", a, dur(max));
                    l.cpu_time = Some(max);
                }
            }
        }
        if let Some(max) = m.memory_bytes
            && l.memory_bytes > max
        {
            note("memory limit", size(l.memory_bytes), size(max));
            l.memory_bytes = max;
        }
        if let Some(max) = m.pids
            && l.pids > max
        {
            note("pids limit", l.pids.to_string(), max.to_string());
            l.pids = max;
        }
        if let Some(max) = m.file_size_bytes
            && l.file_size_bytes > max
        {
            note("file-size limit", size(l.file_size_bytes), size(max));
            l.file_size_bytes = max;
        }
    }
    (l, clamps)
}

/// The limits `req` runs with: `defaults`, then the skill's and the caller's requests
/// ([`RequestedLimits`]), clamped to `config`'s maxima for everyone and for the caller's
/// tenant; with one finding per clamp. The isolation layer applies exactly these, and the
/// policy layer decides on them (`assemble` hands it this function).
pub fn limits_for(
    defaults: &Limits,
    config: &IsolationConfig,
    req: &ExecRequest,
) -> (Limits, Vec<Finding>) {
    let mut requests = vec![req.skill.limits];
    if let Some(r) = req.extensions.get::<RequestedLimits>() {
        requests.push(r.0);
    }
    let mut maxima = vec![config.max.or_defaults(defaults)];
    if let Some(t) = config.tenants.get(&req.caller.tenant) {
        maxima.push(t.max);
    }
    compute_limits(defaults, &requests, &maxima)
}

/// The isolation layer; see the [module docs](self).
#[derive(Debug, Clone)]
pub struct IsolationLayer {
    inner: Arc<Shared>,
}

#[derive(Debug, Clone)]
struct Shared {
    defaults: Limits,
    config: IsolationConfig,
    capabilities: Capabilities,
    runtimes: Option<Arc<crate::runtimes::Runtimes>>,
    statement: Option<OperatorStatement>,
}

impl IsolationLayer {
    /// A layer computing specs from `defaults` and `config`, for an executor that
    /// enforces `capabilities`.
    pub fn new(defaults: Limits, config: IsolationConfig, capabilities: Capabilities) -> Self {
        IsolationLayer {
            inner: Arc::new(Shared {
                defaults,
                config,
                capabilities,
                runtimes: None,
                statement: None,
            }),
        }
    }

    /// Resolves skills' named runtimes from `runtimes`. Without it, a skill naming a
    /// runtime is refused.
    pub fn with_runtimes(self, runtimes: Arc<crate::runtimes::Runtimes>) -> Self {
        let mut shared = (*self.inner).clone();
        shared.runtimes = Some(runtimes);
        IsolationLayer {
            inner: Arc::new(shared),
        }
    }

    /// Relies on the operator's `statement` (already validated) for what it says the
    /// remote side enforces, where the executor does not; see the [module docs](self).
    pub fn with_statement(self, statement: Option<OperatorStatement>) -> Self {
        let mut shared = (*self.inner).clone();
        shared.statement = statement;
        IsolationLayer {
            inner: Arc::new(shared),
        }
    }

    /// Checks the spec of `req` against the executor, then, for what it lacks, against
    /// the operator's statement: `Ok` with the finding saying the statement was relied on
    /// (recorded on the spec too), or every requirement still unenforceable.
    fn check_capabilities(
        &self,
        req: &mut ExecRequest,
    ) -> Result<Option<Finding>, Vec<Unenforceable>> {
        let s = &self.inner;
        let missing = match s.capabilities.check(&req.spec) {
            Ok(()) => return Ok(None),
            Err(missing) => missing,
        };
        let Some(statement) = &s.statement else {
            return Err(missing);
        };
        statement.applied_to(&s.capabilities).check(&req.spec)?;
        let gaps: Vec<&str> = missing.iter().map(|m| m.requirement.as_str()).collect();
        req.spec.relied_on = Some(statement.clone());
        Ok(Some(Finding::new(
            LayerName::Isolation,
            "isolation.operator_statement",
            Severity::Low,
            format!(
                "relied on the operator's statement `{}` that the remote side enforces {}: executor `{}` itself does not enforce {}",
                statement.name,
                statement.enforces_list(),
                s.capabilities.executor,
                gaps.join(", ")
            ),
        )))
    }

    /// Adds the skill's runtime to the spec; `Err` says why it cannot run.
    fn apply_runtime(&self, req: &mut ExecRequest) -> Result<(), String> {
        let installed = match &self.inner.runtimes {
            Some(r) => r.for_skill(&req.skill)?,
            None => match &req.skill.runtime {
                Some(name) => {
                    return Err(format!(
                        "the skill asks for runtime `{name}` but this pipeline offers no runtimes"
                    ));
                }
                None => None,
            },
        };
        if let Some(rt) = installed {
            req.spec.interpreter = Some(rt.interpreter);
            req.spec.read_only_paths.extend(rt.read_only);
            req.spec.env.extend(rt.env);
        }
        Ok(())
    }

    /// Decides the spec for `req` (recorded on it); `Err` holds the refusal's findings.
    pub fn decide_spec(&self, req: &mut ExecRequest) -> Result<Vec<Finding>, Vec<Finding>> {
        let s = &self.inner;
        let (limits, clamps) = limits_for(&s.defaults, &s.config, req);
        req.spec.limits = limits;
        req.spec.runtime = s.config.runtime;
        req.spec
            .read_only_paths
            .extend(s.config.read_only_paths.iter().cloned());
        if let Err(why) = self.apply_runtime(req) {
            let refusal = Finding::new(
                LayerName::Isolation,
                "isolation.runtime",
                Severity::High,
                why,
            );
            return Err(std::iter::once(refusal).chain(clamps).collect());
        }
        match self.check_capabilities(req) {
            Ok(relied) => Ok(relied.into_iter().chain(clamps).collect()),
            Err(missing) => Err(missing
                .into_iter()
                .map(|m| {
                    Finding::new(
                        LayerName::Isolation,
                        "isolation.unenforceable",
                        Severity::High,
                        format!("refused: {m}"),
                    )
                })
                .chain(clamps)
                .collect()),
        }
    }
}

impl Decide for IsolationLayer {
    const LAYER: LayerName = LayerName::Isolation;
    fn decide(&self, req: &mut ExecRequest) -> Result<Vec<Finding>, Rejection> {
        self.decide_spec(req)
            .map_err(|findings| Rejection::new(Status::Error, findings))
    }
}

impl<S> Layer<S> for IsolationLayer {
    type Service = IsolationService<S>;
    fn layer(&self, inner: S) -> Self::Service {
        DecideService::new(inner, Arc::new(self.clone()))
    }
}

/// The service of [`IsolationLayer`].
pub type IsolationService<S> = DecideService<S, IsolationLayer>;

#[cfg(test)]
mod tests {
    use super::*;
    use skillgate_core::{Caller, ExecOutcome, Language, Skill};
    use tower::ServiceExt;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn requests_replace_defaults_and_never_pass_a_maximum() {
        let skill = LimitOverrides {
            wall_timeout: Some(secs(2)),
            memory_bytes: Some(1 << 30),
            ..Default::default()
        };
        let caller = LimitOverrides {
            wall_timeout: Some(secs(100)),
            ..Default::default()
        };
        let global = Maxima {
            wall_timeout: Some(secs(60)),
            memory_bytes: Some(512 << 20),
            ..Default::default()
        };
        let tenant = Maxima {
            wall_timeout: Some(secs(20)),
            ..Default::default()
        };
        let (l, clamps) = compute_limits(&Limits::default(), &[skill, caller], &[global, tenant]);
        assert_eq!(l.wall_timeout, secs(20));
        assert_eq!(l.memory_bytes, 512 << 20);
        assert_eq!(l.pids, Limits::default().pids);
        assert_eq!(clamps.len(), 3, "{clamps:?}");
        // Asking for less is always fine.
        let less = LimitOverrides {
            pids: Some(4),
            ..Default::default()
        };
        let (l, clamps) = compute_limits(&Limits::default(), &[less], &[global]);
        assert_eq!((l.pids, clamps.len()), (4, 0));
    }

    #[test]
    fn an_unlimited_cpu_request_is_clamped_to_the_maximum() {
        let max = Maxima {
            cpu_time: Some(secs(5)),
            ..Default::default()
        };
        let defaults = Limits {
            cpu_time: None,
            ..Limits::default()
        };
        let (l, _) = compute_limits(&defaults, &[], &[max]);
        assert_eq!(l.cpu_time, Some(secs(5)));
    }

    #[test]
    fn a_skill_cannot_raise_its_limits_past_the_defaults_unless_the_operator_allows_it() {
        let greedy = LimitOverrides {
            wall_timeout: Some(secs(1000 * 3600)),
            cpu_time: Some(secs(1000 * 3600)),
            memory_bytes: Some(1000 << 30),
            pids: Some(4_000_000),
            file_size_bytes: Some(1 << 40),
        };
        let run = |config: IsolationConfig| {
            let layer = IsolationLayer::new(Limits::default(), config, full_caps());
            let skill = Skill::builder("s", Language::Python, b"".to_vec())
                .limits(greedy)
                .build();
            let mut req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
            let clamps = layer.decide_spec(&mut req).unwrap();
            (req.spec.limits, clamps)
        };
        let (l, clamps) = run(IsolationConfig::default());
        assert_eq!(
            l,
            Limits::default(),
            "the default config caps at the defaults"
        );
        assert_eq!(clamps.len(), 5, "{clamps:?}");
        // The operator raises one ceiling: that one limit may grow, up to it.
        let raised = IsolationConfig {
            max: Maxima {
                wall_timeout: Some(secs(60)),
                ..Default::default()
            },
            ..IsolationConfig::default()
        };
        let (l, _) = run(raised);
        assert_eq!(l.wall_timeout, secs(60));
        assert_eq!(l.memory_bytes, Limits::default().memory_bytes);
    }

    #[test]
    fn config_parses_tenant_maxima_and_rejects_typos() {
        let cfg: IsolationConfig = toml::from_str(
            "[max]\nwall_timeout = \"30s\"\n[tenants.acme.max]\nmemory_bytes = \"64MiB\"\n",
        )
        .unwrap();
        assert_eq!(cfg.max.wall_timeout, Some(secs(30)));
        assert_eq!(cfg.tenants["acme"].max.memory_bytes, Some(64 << 20));
        assert!(toml::from_str::<IsolationConfig>("[max]\nwall_timout = \"1s\"\n").is_err());
    }

    #[test]
    fn refuses_what_the_executor_cannot_enforce_without_calling_it() {
        let called = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let c = Arc::clone(&called);
        let inner = tower::service_fn(move |_req: ExecRequest| {
            c.store(true, std::sync::atomic::Ordering::SeqCst);
            async { Ok::<_, skillgate_core::BoxError>(ExecOutcome::rejected(Status::Ok, vec![])) }
        });
        let caps = Capabilities {
            memory: false,
            ..full_caps()
        };
        let svc =
            IsolationLayer::new(Limits::default(), IsolationConfig::default(), caps).layer(inner);
        let skill = Skill::builder("s", Language::Python, b"".to_vec()).build();
        let req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let out = rt.block_on(svc.oneshot(req)).unwrap();
        assert_eq!(out.status, Status::Error);
        assert!(!called.load(std::sync::atomic::Ordering::SeqCst));
        assert_eq!(out.findings[0].layer, LayerName::Isolation);
        assert!(
            out.findings[0].message.contains("memory"),
            "{:?}",
            out.findings
        );
    }

    #[test]
    fn records_the_clamped_spec_on_the_request() {
        let cfg = IsolationConfig {
            tenants: [(
                "acme".to_string(),
                TenantIsolation {
                    max: Maxima {
                        wall_timeout: Some(secs(1)),
                        ..Default::default()
                    },
                },
            )]
            .into(),
            ..IsolationConfig::default()
        };
        let layer = IsolationLayer::new(Limits::default(), cfg, full_caps());
        let skill = Skill::builder("s", Language::Python, b"".to_vec()).build();
        let mut req = ExecRequest::new(Caller::new("a", "acme"), skill, serde_json::json!({}));
        req.extensions.insert(RequestedLimits(LimitOverrides {
            wall_timeout: Some(secs(9)),
            ..Default::default()
        }));
        let clamps = layer.decide_spec(&mut req).unwrap();
        assert_eq!(req.spec.limits.wall_timeout, secs(1));
        assert_eq!(clamps[0].rule_id, "isolation.clamped");
    }

    #[test]
    fn an_operator_statement_fills_only_the_gaps_it_names_and_is_recorded() {
        // A black box like a kernel gateway: the wall clock and output caps only.
        let caps = Capabilities {
            executor: "remote".into(),
            wall_timeout: true,
            output_caps: true,
            ..Capabilities::none()
        };
        let statement = |enforces: &str| -> OperatorStatement {
            toml::from_str(&format!("name = \"gw-in-vm\"\nenforces = {enforces}")).unwrap()
        };
        let decide = |statement: Option<OperatorStatement>| {
            let layer =
                IsolationLayer::new(Limits::default(), IsolationConfig::default(), caps.clone())
                    .with_statement(statement);
            let skill = Skill::builder("s", Language::Python, b"".to_vec()).build();
            let mut req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
            let decided = layer.decide_spec(&mut req);
            (decided, req.spec.relied_on)
        };
        // Without a statement: refused, nothing recorded.
        let (refused, relied) = decide(None);
        assert!(
            refused
                .unwrap_err()
                .iter()
                .any(|f| f.message.contains("network none"))
        );
        assert_eq!(relied, None);
        // A statement that leaves a gap: still refused, for that gap alone.
        let (refused, relied) = decide(Some(statement("[\"isolation\"]")));
        let refused = refused.unwrap_err();
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(refused[0].message.contains("network none"), "{refused:?}");
        assert_eq!(relied, None);
        // One that covers them all: the run proceeds, with the statement recorded.
        let full = statement("[\"isolation\", \"network_none\"]");
        let (ok, relied) = decide(Some(full.clone()));
        let findings = ok.unwrap();
        let f = findings
            .iter()
            .find(|f| f.rule_id == "isolation.operator_statement")
            .expect("the statement's finding");
        assert_eq!(f.severity, Severity::Low);
        assert!(f.message.contains("`gw-in-vm`"), "{}", f.message);
        assert!(f.message.contains("memory limit"), "{}", f.message);
        assert_eq!(relied, Some(full.clone()));
        // An executor that enforces everything itself never relies on it.
        let layer = IsolationLayer::new(Limits::default(), IsolationConfig::default(), full_caps())
            .with_statement(Some(full));
        let skill = Skill::builder("s", Language::Python, b"".to_vec()).build();
        let mut req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
        assert!(layer.decide_spec(&mut req).unwrap().is_empty());
        assert_eq!(req.spec.relied_on, None);
    }

    fn full_caps() -> Capabilities {
        Capabilities {
            executor: "test".into(),
            tier: RuntimeTier::Namespace,
            wall_timeout: true,
            cpu_time: true,
            memory: true,
            pids: true,
            pids_reported: true,
            file_size: true,
            open_files: true,
            output_caps: true,
            workdir_size: true,
            user: true,
            seccomp: true,
            seccomp_kill: true,
            network_none: true,
            network_allow_list: false,
            clean_env: true,
            workspace: true,
        }
    }
}
