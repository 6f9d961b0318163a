//! Building the whole pipeline from a [`Config`]: which layers, with which settings, in
//! the architecture's order, around which executor. `skillgate run` uses exactly this, and
//! so can a service that embeds skillgate.
use crate::background::Pending;
use crate::config::ExecutorKind;
use crate::{Config, InputSchemaLayer, IsolationLayer, PipelineBuilder};
use skillgate_core::{BoxExecService, Language, LayerName, NoQuarantine, QuarantineSource};
use skillgate_sandbox::native::CgroupMode;
use skillgate_sandbox::{NativeSandbox, ProcessExecutor};
use skillgate_secrets::{RuleSetBuilder, SecretScanner, SecretsLayer};
use std::sync::Arc;

/// A configuration that cannot be turned into a pipeline (a rule pack or policy that does
/// not load, say). Refusing to start is the fail-closed answer.
#[derive(Debug, thiserror::Error)]
#[error("{layer} layer: {message}")]
pub struct AssembleError {
    /// The layer whose setup failed.
    pub layer: LayerName,
    /// What is wrong, naming the file or key.
    pub message: String,
}

/// The assembled pipeline and what a user should be told about it.
#[derive(Debug)]
pub struct Assembled {
    /// The pipeline, ready to call.
    pub service: BoxExecService,
    /// Warnings for the user (a disabled layer, weaker enforcement).
    pub notices: Vec<String>,
    /// Who is quarantined: the monitor's store, read from the state directory whether or
    /// not the monitor layer runs. The policy layer reads it (its quarantine `forbid`).
    pub quarantine: Arc<dyn QuarantineSource>,
    /// The policy gate of the policy layer (`None` when that layer is disabled): its
    /// entities decide a caller's tenant.
    pub policy: Option<Arc<skillgate_policy::Policy>>,
}

/// Builds the pipeline `config` describes, without the `disabled` layers.
///
/// ```no_run
/// let assembled = skillgate::assemble::from_config(&skillgate::Config::default(), &[]).unwrap();
/// # drop(assembled);
/// ```
pub fn from_config(config: &Config, disabled: &[LayerName]) -> Result<Assembled, AssembleError> {
    // Parsing and validating the Cedar files, and opening the monitor's store, each run on
    // a thread of their own while the other layers are built (each `skillgate run` is a
    // fresh process).
    std::thread::scope(|scope| {
        let policy = (!disabled.contains(&LayerName::Policy)).then(|| {
            Pending::start(scope, "policy-load", || {
                skillgate_policy::Policy::load(&config.policy)
            })
        });
        // The monitor's own store in the state directory (a schema read, a WAL to map).
        let store =
            (config.store.url.is_none() && !disabled.contains(&LayerName::Monitor)).then(|| {
                Pending::start(scope, "monitor-open", || {
                    skillgate_monitor::Monitor::from_config(&config.monitor, None)
                })
            });
        build(config, disabled, policy, store)
    })
}

fn build(
    config: &Config,
    disabled: &[LayerName],
    pending_policy: Option<
        Pending<'_, Result<skillgate_policy::Policy, skillgate_policy::LoadError>>,
    >,
    pending_monitor: Option<
        Pending<'_, Result<skillgate_monitor::Monitor, skillgate_monitor::MonitorError>>,
    >,
) -> Result<Assembled, AssembleError> {
    let mut notices: Vec<String> = disabled
        .iter()
        .map(|l| format!("the {l} layer is disabled for this run"))
        .collect();
    let enabled = |l: LayerName| !disabled.contains(&l);
    // The input schema gate is part of the skill's contract, not a security layer that
    // can be switched off.
    let mut builder = PipelineBuilder::new().layer_at(LayerName::Input, InputSchemaLayer::new());
    if enabled(LayerName::Prescan) {
        builder = builder.layer_at(LayerName::Prescan, prescan_layer(config)?);
    }
    if enabled(LayerName::Secrets) {
        let (layer, secret_notices) = secrets_layer(&config.secrets)?;
        builder = builder.layer_at(LayerName::Secrets, layer);
        notices.extend(secret_notices);
    }
    if enabled(LayerName::Seccomp) {
        let layer = config.seccomp.build_layer().map_err(|e| AssembleError {
            layer: LayerName::Seccomp,
            message: e.to_string(),
        })?;
        builder = builder.layer_at(LayerName::Seccomp, layer);
    }
    if enabled(LayerName::Network) {
        let layer = config.network.build_layer().map_err(|e| AssembleError {
            layer: LayerName::Network,
            message: e.to_string(),
        })?;
        builder = builder.layer_at(LayerName::Network, layer);
    }
    // The monitor: outermost. A state store that cannot be opened refuses the run.
    // Without it, quarantines are still read from its state: switching the monitor off
    // does not lift them.
    // With `[store] url`, the monitor's state is in PostgreSQL, shared by every replica;
    // a database that cannot be reached refuses the run.
    let shared = match &config.store.url {
        Some(url) if enabled(LayerName::Monitor) || enabled(LayerName::Policy) => Some(Arc::new(
            skillgate_monitor::PgState::open(url).map_err(|e| AssembleError {
                layer: LayerName::Monitor,
                message: e.to_string(),
            })?,
        )),
        _ => None,
    };
    let mut quarantine: Arc<dyn QuarantineSource> = Arc::new(NoQuarantine);
    if let (Some(state), false) = (&shared, enabled(LayerName::Monitor)) {
        quarantine = state.clone();
    } else if !enabled(LayerName::Monitor) && enabled(LayerName::Policy) {
        quarantine = Arc::new(
            skillgate_monitor::StateQuarantine::from_config(&config.monitor, None).map_err(
                |e| AssembleError {
                    layer: LayerName::Policy,
                    message: e.to_string(),
                },
            )?,
        );
    }
    let mut monitor_layer = None;
    if enabled(LayerName::Monitor) {
        let monitor = match &shared {
            Some(state) => skillgate_monitor::Monitor::with_state(state.clone(), &config.monitor)
                .map_err(|e| e.to_string()),
            // Opened by `from_config` whenever there is no shared state (fail closed if not).
            None => pending_monitor
                .ok_or_else(|| "the monitor's store was not opened".to_string())
                .and_then(Pending::wait)
                .and_then(|opened| opened.map_err(|e| e.to_string())),
        }
        .map_err(|message| AssembleError {
            layer: LayerName::Monitor,
            message,
        })?;
        quarantine = monitor.store().clone().into_quarantine_source();
        monitor_layer = Some(skillgate_monitor::MonitorLayer::new(monitor));
    }
    let mut gate = None;
    if let Some(pending) = pending_policy {
        let policy = Arc::new(
            pending
                .wait()
                .and_then(|loaded| loaded.map_err(|e| e.to_string()))
                .map_err(|message| AssembleError {
                    layer: LayerName::Policy,
                    message,
                })?
                .with_quarantine(quarantine.clone())
                .with_run_limits(run_limits(config, enabled(LayerName::Isolation))),
        );
        gate = Some(policy.clone());
        if config.policy.entities.is_none() {
            notices.push(
                "no [policy] entities file is configured: every agent is unknown, so the policy layer denies every execution".into(),
            );
        }
        builder = builder.layer_at(
            LayerName::Policy,
            skillgate_policy::PolicyLayer::new(policy.clone()),
        );
        // A skill is published when the operator's catalogue records it: its own blocks
        // then count against it, not against its caller.
        monitor_layer = monitor_layer
            .map(|m| m.published_by(move |skill| policy.catalogue().get(&skill.digest).is_some()));
    }
    if let Some(layer) = monitor_layer {
        builder = builder.layer_at(LayerName::Monitor, layer);
    }

    let runtimes = Arc::new(
        crate::runtimes::Runtimes::from_config(config).map_err(|message| AssembleError {
            layer: LayerName::Isolation,
            message,
        })?,
    );
    if let Some(statement) = &config.executor.statement {
        statement.validate().map_err(|message| AssembleError {
            layer: LayerName::Executor,
            message,
        })?;
    }
    let isolation = |caps| {
        IsolationLayer::new(config.limits, config.isolation.clone(), caps)
            .with_runtimes(runtimes.clone())
            .with_statement(config.executor.statement.clone())
    };
    let ex = &config.executor;
    let (docker, oci, jupyter, k8s) = (
        ExecutorKind::Docker,
        ExecutorKind::Oci,
        ExecutorKind::Jupyter,
        ExecutorKind::Kubernetes,
    );
    let set = [
        ("socket", ex.socket.is_some(), &[docker][..]),
        ("image", ex.image.is_some(), &[docker, k8s][..]),
        ("kubeconfig", ex.kubeconfig.is_some(), &[k8s][..]),
        ("namespace", ex.namespace.is_some(), &[k8s][..]),
        (
            "image_pull_policy",
            ex.image_pull_policy.is_some(),
            &[k8s][..],
        ),
        (
            "node_seccomp_dir",
            ex.node_seccomp_dir.is_some(),
            &[k8s][..],
        ),
        (
            "profiles_installed",
            ex.profiles_installed.is_some(),
            &[k8s][..],
        ),
        ("egress_enforced", ex.egress_enforced.is_some(), &[k8s][..]),
        (
            "profile_configmap",
            ex.profile_configmap.is_some(),
            &[k8s][..],
        ),
        ("node_pids_limit", ex.node_pids_limit.is_some(), &[k8s][..]),
        ("node_rlimits", ex.node_rlimits.is_some(), &[k8s][..]),
        ("max_concurrent", ex.max_concurrent.is_some(), &[k8s][..]),
        ("runtime_classes", ex.runtime_classes.is_some(), &[k8s][..]),
        ("runtime", ex.runtime.is_some(), &[docker, oci][..]),
        ("state_root", ex.state_root.is_some(), &[oci][..]),
        ("url", ex.url.is_some(), &[jupyter][..]),
        ("token", ex.token.is_some(), &[jupyter][..]),
        // Only an executor that enforces nothing of isolation itself has a remote side to
        // vouch for; the others declare what they enforce.
        ("statement", ex.statement.is_some(), &[jupyter][..]),
    ];
    if let Some((key, _, kinds)) = set
        .iter()
        .find(|(_, on, kinds)| *on && !kinds.contains(&ex.kind))
    {
        let kinds: Vec<String> = kinds
            .iter()
            .map(|k| format!("\"{}\"", k.as_str()))
            .collect();
        return Err(AssembleError {
            layer: LayerName::Executor,
            message: format!(
                "[executor] `{key}` applies to kind = {} only",
                kinds.join(" or ")
            ),
        });
    }
    let service = match config.executor.kind {
        ExecutorKind::Native => {
            let executor = native_sandbox(config);
            let host = executor.host();
            if let Err(why) = &host.namespaces {
                notices.push(format!("the native sandbox cannot run here: {why}"));
            }
            if let CgroupMode::Unavailable(why) = &host.cgroups {
                notices.push(format!("memory and pids limits cannot be enforced: {why}"));
            }
            if enabled(LayerName::Isolation) {
                builder =
                    builder.layer_at(LayerName::Isolation, isolation(executor.capabilities()));
            }
            builder.build(executor)
        }
        ExecutorKind::Process => {
            let mut executor = ProcessExecutor::new();
            if let Some(p) = &config.interpreters.python {
                executor = executor.with_interpreter(Language::Python, p);
            }
            if let Some(p) = &config.interpreters.javascript {
                executor = executor.with_interpreter(Language::JavaScript, p);
            }
            notices.push(
                "executor kind `process`: skills run as plain processes without isolation; use it only for trusted code".into(),
            );
            if enabled(LayerName::Isolation) {
                builder =
                    builder.layer_at(LayerName::Isolation, isolation(executor.capabilities()));
            }
            builder.build(executor)
        }
        ExecutorKind::Docker => {
            let executor = docker_executor(config)?;
            if enabled(LayerName::Isolation) {
                builder =
                    builder.layer_at(LayerName::Isolation, isolation(executor.capabilities()));
            }
            builder.build(executor)
        }
        ExecutorKind::Oci => {
            let executor = oci_executor(config)?;
            if enabled(LayerName::Isolation) {
                builder =
                    builder.layer_at(LayerName::Isolation, isolation(executor.capabilities()));
            }
            builder.build(executor)
        }
        ExecutorKind::Jupyter => {
            let executor = jupyter_executor(config)?;
            notices.push(
                "executor kind `jupyter`: a kernel gateway is no sandbox (kernels run as its user, with its network and files); it enforces only the wall clock and the output caps".into(),
            );
            if let Some(s) = &config.executor.statement {
                notices.push(format!(
                    "[executor.statement] `{}`: relying on the operator's word that the remote side enforces {}",
                    s.name,
                    s.enforces_list()
                ));
            }
            if enabled(LayerName::Isolation) {
                builder =
                    builder.layer_at(LayerName::Isolation, isolation(executor.capabilities()));
            }
            builder.build(executor)
        }
        ExecutorKind::Kubernetes => {
            let executor = kubernetes_executor(config)?;
            if enabled(LayerName::Isolation) {
                builder =
                    builder.layer_at(LayerName::Isolation, isolation(executor.capabilities()));
            }
            builder.build(executor)
        }
    };
    Ok(Assembled {
        service,
        notices,
        quarantine,
        policy: gate,
    })
}

/// The Docker Engine API executor of `[executor] kind = "docker"`.
#[cfg(feature = "docker")]
pub fn docker_executor(
    config: &Config,
) -> Result<skillgate_executors::docker::DockerExecutor, AssembleError> {
    let ex = &config.executor;
    let error = |message: String| AssembleError {
        layer: LayerName::Executor,
        message,
    };
    let socket = ex.socket.clone().ok_or_else(|| {
        error(
            "[executor] kind = \"docker\" needs `socket`, the engine's unix socket (`scripts/services up docker` prints one)".into(),
        )
    })?;
    let settings = skillgate_executors::docker::DockerSettings {
        socket,
        image: ex.image.clone(),
        runtime: ex.runtime.clone(),
    };
    skillgate_executors::docker::DockerExecutor::new(settings).map_err(|e| error(e.to_string()))
}

/// Without the `docker` feature, `kind = "docker"` is an error saying so.
#[cfg(not(feature = "docker"))]
fn docker_executor(_: &Config) -> Result<ProcessExecutor, AssembleError> {
    Err(AssembleError {
        layer: LayerName::Executor,
        message:
            "[executor] kind = \"docker\": this skillgate was built without the `docker` feature"
                .into(),
    })
}

/// The OCI-runtime executor of `[executor] kind = "oci"`.
#[cfg(feature = "oci")]
pub fn oci_executor(
    config: &Config,
) -> Result<skillgate_executors::oci::OciExecutor, AssembleError> {
    let ex = &config.executor;
    let mut settings =
        skillgate_executors::oci::OciSettings::new(ex.runtime.as_deref().unwrap_or("runc"));
    if let Some(root) = &ex.state_root {
        settings.state_root = root.clone();
    }
    let mut executor =
        skillgate_executors::oci::OciExecutor::new(settings).map_err(|e| AssembleError {
            layer: LayerName::Executor,
            message: format!("[executor] kind = \"oci\": {e}"),
        })?;
    if let Some(p) = &config.interpreters.python {
        executor = executor.with_interpreter(Language::Python, p);
    }
    if let Some(p) = &config.interpreters.javascript {
        executor = executor.with_interpreter(Language::JavaScript, p);
    }
    Ok(executor)
}

/// Without the `oci` feature, `kind = "oci"` is an error saying so.
#[cfg(not(feature = "oci"))]
fn oci_executor(_: &Config) -> Result<ProcessExecutor, AssembleError> {
    Err(AssembleError {
        layer: LayerName::Executor,
        message: "[executor] kind = \"oci\": this skillgate was built without the `oci` feature"
            .into(),
    })
}

/// The Jupyter Kernel Gateway executor of `[executor] kind = "jupyter"`; the token from
/// `token`, else from `SKILLGATE_JUPYTER_TOKEN`.
#[cfg(feature = "jupyter")]
pub fn jupyter_executor(
    config: &Config,
) -> Result<skillgate_executors::jupyter::JupyterExecutor, AssembleError> {
    use skillgate_executors::jupyter::{JupyterExecutor, JupyterSettings, TOKEN_ENV};
    let ex = &config.executor;
    let error = |message: String| AssembleError {
        layer: LayerName::Executor,
        message,
    };
    let url = ex.url.clone().ok_or_else(|| {
        error(
            "[executor] kind = \"jupyter\" needs `url`, the kernel gateway's base URL (`scripts/services up jupyter` prints one)".into(),
        )
    })?;
    let mut settings = JupyterSettings::new(url);
    settings.token = jupyter_token(ex.token.as_deref(), std::env::var(TOKEN_ENV))
        .map_err(|e| error(format!("{TOKEN_ENV}: {e}")))?;
    JupyterExecutor::new(settings).map_err(|e| error(e.to_string()))
}

/// The gateway's token: `[executor] token`, else the environment variable's value (`env`),
/// else none; a variable that is set but not Unicode is an error.
#[cfg(feature = "jupyter")]
fn jupyter_token(
    configured: Option<&str>,
    env: Result<String, std::env::VarError>,
) -> Result<Option<String>, std::env::VarError> {
    match (configured, env) {
        (Some(t), _) => Ok(Some(t.to_string())),
        (None, Ok(t)) if !t.is_empty() => Ok(Some(t)),
        (None, Ok(_) | Err(std::env::VarError::NotPresent)) => Ok(None),
        (None, Err(e)) => Err(e),
    }
}

/// Without the `jupyter` feature, `kind = "jupyter"` is an error saying so.
#[cfg(not(feature = "jupyter"))]
pub fn jupyter_executor(_: &Config) -> Result<ProcessExecutor, AssembleError> {
    Err(AssembleError {
        layer: LayerName::Executor,
        message:
            "[executor] kind = \"jupyter\": this skillgate was built without the `jupyter` feature"
                .into(),
    })
}

/// The Kubernetes executor of `[executor] kind = "kubernetes"`.
#[cfg(feature = "kubernetes")]
pub fn kubernetes_executor(
    config: &Config,
) -> Result<skillgate_executors::kubernetes::KubernetesExecutor, AssembleError> {
    use skillgate_executors::kubernetes::{KubernetesExecutor, KubernetesSettings};
    let ex = &config.executor;
    let mut s = KubernetesSettings::new(ex.namespace.as_deref().unwrap_or("skillgate"));
    s.kubeconfig = ex.kubeconfig.clone();
    s.image = ex.image.clone();
    if let Some(p) = &ex.image_pull_policy {
        s.image_pull_policy = p.clone();
    }
    s.node_seccomp_dir = ex.node_seccomp_dir.clone();
    s.profiles_installed = ex.profiles_installed.unwrap_or(false);
    s.profile_configmap = ex.profile_configmap.clone();
    s.egress_enforced = ex.egress_enforced.unwrap_or(false);
    s.node_pids_limit = ex.node_pids_limit;
    s.node_rlimits = ex.node_rlimits;
    if let Some(n) = ex.max_concurrent {
        s.max_concurrent = n;
    }
    s.runtime_classes = ex.runtime_classes.clone().unwrap_or_default();
    KubernetesExecutor::new(s).map_err(|e| AssembleError {
        layer: LayerName::Executor,
        message: format!("[executor] kind = \"kubernetes\": {e}"),
    })
}

/// Without the `kubernetes` feature, `kind = "kubernetes"` is an error saying so.
#[cfg(not(feature = "kubernetes"))]
pub fn kubernetes_executor(_: &Config) -> Result<ProcessExecutor, AssembleError> {
    Err(AssembleError {
        layer: LayerName::Executor,
        message: "[executor] kind = \"kubernetes\": this skillgate was built without the `kubernetes` feature".into(),
    })
}

/// The limits a request runs with, as the isolation layer computes them (its maxima only
/// when it runs), for the policy layer to decide on.
fn run_limits(config: &Config, isolation: bool) -> skillgate_policy::RunLimits {
    let defaults = config.limits;
    let isolation = if isolation {
        config.isolation.clone()
    } else {
        crate::isolation::IsolationConfig::default()
    };
    Arc::new(move |req| crate::isolation::limits_for(&defaults, &isolation, req).0)
}

/// The secrets layer `[secrets]` describes, and notices about gitleaks rules that could
/// not be imported.
fn secrets_layer(
    cfg: &crate::config::SecretsConfig,
) -> Result<(SecretsLayer, Vec<String>), AssembleError> {
    let err = |message: String| AssembleError {
        layer: LayerName::Secrets,
        message,
    };
    // The embedded pack alone cannot fail on the operator's input: it is built on a
    // thread of its own while the skill runs (the layer waits for it on the way out).
    // Rule files and a gitleaks config are read now, so that their errors come before
    // anything runs.
    if cfg.default_rules && cfg.rules.is_empty() && cfg.gitleaks.is_none() {
        let build = || {
            let set = RuleSetBuilder::with_default_pack()
                .and_then(|b| b.build())
                .map_err(|e| e.to_string())?;
            Ok(SecretScanner::new(set))
        };
        return Ok((SecretsLayer::building(build, cfg.mode), Vec::new()));
    }
    let mut rules = if cfg.default_rules {
        RuleSetBuilder::with_default_pack().map_err(|e| err(e.to_string()))?
    } else {
        RuleSetBuilder::new()
    };
    for path in &cfg.rules {
        rules.add_file(path).map_err(|e| err(e.to_string()))?;
    }
    let mut notices = Vec::new();
    if let Some(path) = &cfg.gitleaks {
        let text = std::fs::read_to_string(path).map_err(|e| {
            err(format!(
                "cannot read gitleaks config {}: {e}",
                path.display()
            ))
        })?;
        let import = rules
            .add_gitleaks(&text, &path.display().to_string())
            .map_err(|e| err(e.to_string()))?;
        notices.extend(import.untranslated.iter().map(|u| {
            format!(
                "secrets: gitleaks rule `{}` from {} not imported: {}",
                u.id,
                path.display(),
                u.reason
            )
        }));
    }
    let set = rules.build().map_err(|e| err(e.to_string()))?;
    if set.is_empty() {
        return Err(err(
            "no secret rules: default_rules is false and no rule file is given".into(),
        ));
    }
    Ok((
        SecretsLayer::new(SecretScanner::new(set), cfg.mode),
        notices,
    ))
}

/// The pre-scan layer `[prescan]` describes: the built-in packs or `rules_dir`, with its
/// verdicts cached by content in the state directory's `prescan-cache` (no cache when there
/// is no state directory: every skill is scanned).
fn prescan_layer(config: &Config) -> Result<skillgate_prescan::PreScanLayer, AssembleError> {
    let mut scanner = prescanner(&config.prescan)?;
    let state_dir = skillgate_monitor::resolve_state_dir(&config.monitor, None).ok();
    if let Some(cache) =
        state_dir.and_then(|d| skillgate_prescan::VerdictCache::open(&d.join("prescan-cache")).ok())
    {
        scanner = scanner.with_cache(cache);
    }
    Ok(skillgate_prescan::PreScanLayer::new(scanner))
}

/// The pre-scanner `[prescan]` describes (rules, threshold, unlisted modules), as the
/// pipeline's pre-scan layer uses it; for checking code without running it.
pub fn prescanner(
    cfg: &crate::config::PrescanConfig,
) -> Result<skillgate_prescan::PreScanner, AssembleError> {
    use skillgate_prescan::{PreScanner, RuleSet, ScanOptions};
    let options = ScanOptions {
        threshold: cfg.severity_threshold,
        unknown_module: cfg.unknown_module,
        ..ScanOptions::default()
    };
    // The operator's packs are loaded now, so that their errors come before anything
    // runs; the built-in ones, compiled in and tested, when a scan first needs them (a
    // skill whose verdict is cached needs none).
    let Some(dir) = &cfg.rules_dir else {
        return Ok(PreScanner::embedded(options));
    };
    let rules = RuleSet::load_dir(dir).map_err(|e| AssembleError {
        layer: LayerName::Prescan,
        message: e.to_string(),
    })?;
    Ok(PreScanner::with_rules(std::sync::Arc::new(rules), options))
}

/// The native sandbox `config` describes: its interpreters, and the seccomp compiler of
/// `skillgate-confine` for this machine's architecture (an unsupported architecture fails
/// closed: a run that asks for a profile is refused).
///
/// ```no_run
/// let sandbox = skillgate::assemble::native_sandbox(&skillgate::Config::default());
/// println!("{:?}", sandbox.capabilities());
/// ```
pub fn native_sandbox(config: &Config) -> NativeSandbox {
    let mut executor = NativeSandbox::new().with_seccomp_compiler(Arc::new(|profile| {
        let arch = skillgate_confine::Arch::native()
            .ok_or_else(|| format!("no seccomp support for {}", std::env::consts::ARCH))?;
        skillgate_confine::bpf::compile(profile, arch).map_err(|e| e.to_string())
    }));
    if let Some(p) = &config.interpreters.python {
        executor = executor.with_interpreter(Language::Python, p);
    }
    if let Some(p) = &config.interpreters.javascript {
        executor = executor.with_interpreter(Language::JavaScript, p);
    }
    executor
}

#[cfg(all(test, feature = "jupyter"))]
mod tests {
    use super::jupyter_token;
    use std::env::VarError;

    #[test]
    fn the_jupyter_token_comes_from_the_file_else_the_environment() {
        let absent = || Err(VarError::NotPresent);
        assert_eq!(
            jupyter_token(Some("f"), Ok("e".into())),
            Ok(Some("f".into()))
        );
        assert_eq!(jupyter_token(None, Ok("e".into())), Ok(Some("e".into())));
        assert_eq!(jupyter_token(None, Ok(String::new())), Ok(None));
        assert_eq!(jupyter_token(None, absent()), Ok(None));
        let bad = Err(VarError::NotUnicode("\u{fffd}".into()));
        assert!(jupyter_token(None, bad).is_err());
    }
}
