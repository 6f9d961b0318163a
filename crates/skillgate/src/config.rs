//! The configuration file, `skillgate.toml`. Every key is documented in
//! `examples/skillgate.toml`; unknown keys are errors, so a typo never silently drops a
//! setting.
//!
//! ```
//! let cfg: skillgate::Config = skillgate::config::from_str(r#"
//!     [limits]
//!     wall_timeout = "5s"
//!     memory_bytes = "128MiB"
//! "#, "inline").unwrap();
//! assert_eq!(cfg.limits.wall_timeout, std::time::Duration::from_secs(5));
//! assert!(skillgate::config::from_str("[limits]\nwall_timout = 1", "inline").is_err());
//! ```
use serde::Deserialize;
use skillgate_core::Limits;
use std::path::{Path, PathBuf};

/// Everything `skillgate.toml` can say.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Default limits of every run (a skill may ask for others; see the isolation layer).
    pub limits: Limits,
    /// Which interpreter executables to use.
    pub interpreters: Interpreters,
    /// The isolation layer: runtime tier, extra read-only paths, maxima per tenant.
    pub isolation: crate::isolation::IsolationConfig,
    /// Which executor runs the skills.
    pub executor: ExecutorConfig,
    /// Layer 4: the seccomp preset per language and tenant, and the violation action.
    pub seccomp: skillgate_confine::SeccompConfig,
    /// Layer 5: the most network a skill may get, by default and per tenant.
    pub network: skillgate_confine::NetworkConfig,
    /// The Cedar policy gate: policies folder, entities file, grants file.
    pub policy: skillgate_policy::PolicySources,
    /// The behavioural monitor: state directory, detections, quarantine and throttle.
    pub monitor: skillgate_monitor::MonitorConfig,
    /// The output secret scan (layer 6).
    pub secrets: SecretsConfig,
    /// The AST pre-scan (layer 2).
    pub prescan: PrescanConfig,
    /// Named runtimes: the default per language, where they are installed.
    pub runtimes: crate::runtimes::RuntimesConfig,
    /// Where the state several processes share lives: PostgreSQL at `url`, else SQLite
    /// in the state directory.
    pub store: skillgate_store::StoreConfig,
    /// Sessions (`skillgate session`, and `serve`'s `/v1/sessions` and MCP session tools).
    pub sessions: SessionsConfig,
}

/// `[sessions]`: how sessions' steps run. The values are checked where sessions are
/// opened (`skillgate_session::Settings::from_config`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SessionsConfig {
    /// The environment variables a step may set, replacing the default allow-list
    /// (`skillgate_session::env::DEFAULT_ALLOW`); `None`: that list.
    pub env_allow: Option<Vec<String>>,
}

/// `[prescan]`: the AST pre-scan of the skill's code.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PrescanConfig {
    /// Findings at or above this severity block the run (`info` .. `critical`).
    pub severity_threshold: skillgate_core::Severity,
    /// What an import outside the allow-list yields: `warn` or `block`.
    pub unknown_module: skillgate_prescan::UnknownModuleAction,
    /// A rules directory (with `python/` and `javascript/` packs) replacing the built-in
    /// packs.
    pub rules_dir: Option<PathBuf>,
}

impl Default for PrescanConfig {
    fn default() -> Self {
        let options = skillgate_prescan::ScanOptions::default();
        PrescanConfig {
            severity_threshold: options.threshold,
            unknown_module: options.unknown_module,
            rules_dir: None,
        }
    }
}

/// `[secrets]`: how skill output is scanned for leaked credentials.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SecretsConfig {
    /// `redact` (default), `block` or `report`.
    pub mode: skillgate_secrets::Mode,
    /// Load the built-in rule pack (default true).
    pub default_rules: bool,
    /// Extra rule files in the skillgate format.
    pub rules: Vec<PathBuf>,
    /// A gitleaks TOML configuration to import alongside.
    pub gitleaks: Option<PathBuf>,
}

impl Default for SecretsConfig {
    fn default() -> Self {
        SecretsConfig {
            mode: skillgate_secrets::Mode::Redact,
            default_rules: true,
            rules: Vec::new(),
            gitleaks: None,
        }
    }
}

/// `[executor]`: which executor runs the skills.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ExecutorConfig {
    /// The executor kind.
    pub kind: ExecutorKind,
    /// `docker`: the engine's unix socket (Docker Engine or Podman's compatible service;
    /// the executor tells them apart through the version endpoint).
    pub socket: Option<PathBuf>,
    /// `docker`: the image of skills that name no runtime (a runtime's skills use that
    /// runtime's image, loaded from `skillgate runtime export`).
    pub image: Option<String>,
    /// `docker`: the engine's OCI runtime for the containers (`runsc` for gVisor), when
    /// not its default. Docker Engine only. `oci`: the runtime that runs the bundles,
    /// `runc`, `runsc` or `crun` (a command name or a path; default `runc`).
    pub runtime: Option<String>,
    /// `oci`: the state root (the runtime's container state and the shared read-only
    /// root of the bundles; default `/run/skillgate-oci`).
    pub state_root: Option<PathBuf>,
    /// `jupyter`: the kernel gateway's base URL (`http://127.0.0.1:8888`).
    pub url: Option<String>,
    /// `jupyter`: the gateway's auth token; when unset, the `SKILLGATE_JUPYTER_TOKEN`
    /// environment variable (so the token need not be in the file).
    pub token: Option<String>,
    /// `jupyter`: `[executor.statement]`, the operator's named statement that the remote
    /// side (the gateway's container or VM) enforces what the executor cannot: the
    /// isolation layer then lets runs proceed that need only what it names, and says so
    /// in their reports and audit records (see [`skillgate_core::OperatorStatement`]).
    pub statement: Option<skillgate_core::OperatorStatement>,
    /// `kubernetes`: the kubeconfig (default: `KUBECONFIG`, `~/.kube/config`, or the
    /// in-cluster service account).
    pub kubeconfig: Option<PathBuf>,
    /// `kubernetes`: the namespace of the runs' pods (default `skillgate`; it must exist).
    pub namespace: Option<String>,
    /// `kubernetes`: `Always`, `IfNotPresent` (the default) or `Never`.
    pub image_pull_policy: Option<String>,
    /// `kubernetes`: the node's seccomp profile root, when this process can write it (a
    /// one-node cluster): profiles are installed there before each run.
    pub node_seccomp_dir: Option<PathBuf>,
    /// `kubernetes`: the operator states that the profile installer
    /// (`skillgate emit k8s-profile-installer`) runs on every node.
    pub profiles_installed: Option<bool>,
    /// `kubernetes`: the installer's ConfigMap (`namespace/name`), where a run's profile
    /// is looked up before its pod is created.
    pub profile_configmap: Option<String>,
    /// `kubernetes`: the operator states that the cluster enforces NetworkPolicy egress
    /// (a policy engine, or pods with no way out). Without it every run is refused.
    pub egress_enforced: Option<bool>,
    /// `kubernetes`: the kubelet's `podPidsLimit` on every node (the process limit).
    pub node_pids_limit: Option<u32>,
    /// `kubernetes`: `[executor.node_rlimits]`, the rlimits the node's runtime sets on
    /// every container (`cpu_secs`, `file_size`, `open_files`; needed for JavaScript).
    pub node_rlimits: Option<skillgate_core::NodeRlimits>,
    /// `kubernetes`: pods at once (default 16); the rest queue.
    pub max_concurrent: Option<usize>,
    /// `kubernetes`: `[executor.runtime_classes]`, a RuntimeClass per tier above
    /// `container` (`micro_vm = "gvisor"`).
    pub runtime_classes: Option<std::collections::BTreeMap<skillgate_core::RuntimeTier, String>>,
}

/// The executors `skillgate run` can assemble.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutorKind {
    /// The native Linux sandbox (namespaces, cgroups, landlock, seccomp). The default.
    #[default]
    Native,
    /// Plain child processes with rlimits: NO isolation, only for trusted code. It cannot
    /// enforce memory, pids, user or network limits, so the isolation layer refuses every
    /// run on it unless that layer is disabled.
    Process,
    /// One container per run through the Docker Engine API (Docker Engine or Podman),
    /// at `socket`.
    Docker,
    /// One OCI bundle per run under an OCI runtime (`runc`, gVisor's `runsc`, `crun`),
    /// with no daemon.
    Oci,
    /// One kernel per run through a Jupyter Kernel Gateway at `url`. NO isolation: it
    /// enforces the wall clock and the output caps only, so the isolation layer refuses
    /// every run on it unless that layer is disabled or `[executor.statement]` states
    /// that the remote side enforces the rest.
    Jupyter,
    /// One hardened pod per run on a Kubernetes cluster (`kubeconfig`, `namespace`).
    Kubernetes,
}

impl ExecutorKind {
    /// The kind as written in `skillgate.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            ExecutorKind::Native => "native",
            ExecutorKind::Process => "process",
            ExecutorKind::Docker => "docker",
            ExecutorKind::Oci => "oci",
            ExecutorKind::Jupyter => "jupyter",
            ExecutorKind::Kubernetes => "kubernetes",
        }
    }
}

/// Interpreter overrides: a path or a command name looked up in `PATH`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Interpreters {
    /// For Python skills (default `python3`).
    pub python: Option<PathBuf>,
    /// For JavaScript skills (default `node`).
    pub javascript: Option<PathBuf>,
}

/// A config file that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML or has wrong keys or values.
    #[error("invalid config {origin}: {message}")]
    Parse {
        /// The file (or `inline`).
        origin: String,
        /// What is wrong, with the line and key.
        message: String,
    },
}

/// Parses config text; `origin` names it in errors.
pub fn from_str(text: &str, origin: &str) -> Result<Config, ConfigError> {
    toml::from_str(text).map_err(|e| ConfigError::Parse {
        origin: origin.to_string(),
        message: e.to_string().trim_end().to_string(),
    })
}

impl Config {
    /// Reads `path` when one is given, else the defaults (what every command's `--config`
    /// means).
    pub fn load_or_default(path: Option<&Path>) -> Result<Config, ConfigError> {
        path.map_or_else(|| Ok(Config::default()), Config::load)
    }

    /// Reads and parses a config file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.into(),
            source,
        })?;
        let mut config = from_str(&text, &path.display().to_string())?;
        // Paths in a config file are relative to the file's folder; made absolute here, so
        // every later error names the path that was actually tried.
        let base = path.parent().unwrap_or(Path::new("."));
        let base = std::fs::canonicalize(base)
            .or_else(|_| std::path::absolute(base))
            .unwrap_or_else(|_| base.to_path_buf());
        config.resolve_relative_to(&base);
        Ok(config)
    }

    /// Makes every relative file path of the config relative to `base`. Interpreters given
    /// as a bare command name (`python3`) stay names looked up in `PATH`.
    fn resolve_relative_to(&mut self, base: &Path) {
        self.policy.resolve_relative_to(base);
        self.runtimes.resolve_relative_to(base);
        let is_name = |p: &PathBuf| p.components().count() == 1;
        let interpreters = [
            &mut self.interpreters.python,
            &mut self.interpreters.javascript,
        ];
        let interpreters = interpreters.into_iter().flatten().filter(|p| !is_name(p));
        let optional = [
            &mut self.prescan.rules_dir,
            &mut self.secrets.gitleaks,
            &mut self.network.policy_file,
            &mut self.monitor.state_dir,
            &mut self.monitor.rules,
        ];
        for p in optional
            .into_iter()
            .flatten()
            .chain(self.secrets.rules.iter_mut())
            .chain(interpreters)
        {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_example_parses_and_means_what_it_says() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/skillgate.toml");
        let cfg = Config::load(&path).unwrap();
        assert_eq!(
            cfg.limits,
            Limits::default(),
            "the example documents the defaults"
        );
        let defaults = PrescanConfig::default();
        assert_eq!(cfg.prescan.severity_threshold, defaults.severity_threshold);
        assert_eq!(cfg.prescan.unknown_module, defaults.unknown_module);
        assert_eq!(cfg.prescan.rules_dir, None);
        assert_eq!(cfg.secrets.mode, skillgate_secrets::Mode::Redact);
        assert!(cfg.secrets.default_rules && cfg.secrets.rules.is_empty());
        assert_eq!(cfg.seccomp.python.as_deref(), Some("python"));
        assert_eq!(cfg.seccomp.javascript.as_deref(), Some("node"));
        assert!(cfg.network.default.is_none(), "no network by default");
        assert!(cfg.seccomp.build_layer().is_ok() && cfg.network.build_layer().is_ok());
        assert_eq!(cfg.monitor, skillgate_monitor::MonitorConfig::default());
    }

    #[test]
    fn policy_paths_resolve_relative_to_the_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("skillgate.toml");
        std::fs::write(
            &path,
            "[policy]\nentities = \"entities.json\"\ngrants = \"/abs/grants.json\"\n",
        )
        .unwrap();
        let cfg = Config::load(&path).unwrap();
        assert_eq!(cfg.policy.entities, Some(dir.path().join("entities.json")));
        assert_eq!(cfg.policy.grants, Some(PathBuf::from("/abs/grants.json")));
        assert_eq!(cfg.policy.policies, None);
        assert!(from_str("[policy]\nentitys = \"x\"\n", "x.toml").is_err());
    }

    #[test]
    fn every_relative_path_resolves_to_an_absolute_one_beside_the_config() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("skillgate.toml"),
            "[prescan]\nrules_dir = \"rules\"\n[secrets]\nrules = [\"extra.toml\"]\n\
             gitleaks = \"gl.toml\"\n[network]\npolicy_file = \"net.toml\"\n\
             [monitor]\nstate_dir = \"state\"\nrules = \"det.toml\"\n\
             [interpreters]\npython = \"python3\"\njavascript = \"bin/node\"\n",
        )
        .unwrap();
        // Loaded through a relative path, as `--config skillgate.toml` does.
        let cwd = std::env::current_dir().unwrap();
        let rel = pathdiff(dir.path(), &cwd);
        let cfg = Config::load(&rel.join("skillgate.toml")).unwrap();
        let d = dir.path();
        assert_eq!(cfg.prescan.rules_dir, Some(d.join("rules")));
        assert_eq!(cfg.secrets.rules, [d.join("extra.toml")]);
        assert_eq!(cfg.secrets.gitleaks, Some(d.join("gl.toml")));
        assert_eq!(cfg.network.policy_file, Some(d.join("net.toml")));
        assert_eq!(cfg.monitor.state_dir, Some(d.join("state")));
        assert_eq!(cfg.monitor.rules, Some(d.join("det.toml")));
        assert_eq!(cfg.interpreters.python, Some(PathBuf::from("python3")));
        assert_eq!(cfg.interpreters.javascript, Some(d.join("bin/node")));
    }

    /// `to` as a path relative to `from` (both absolute).
    fn pathdiff(to: &Path, from: &Path) -> PathBuf {
        let up = from.components().count() - 1;
        let mut p: PathBuf = std::iter::repeat_n("..", up).collect();
        p.push(to.strip_prefix("/").unwrap());
        p
    }

    #[test]
    fn bad_values_name_the_key() {
        let err = from_str("[limits]\nmemory_bytes = \"lots\"\n", "x.toml")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("x.toml") && err.contains("memory_bytes") && err.contains("lots"),
            "{err}"
        );
        let err = from_str("[secrets]\nmode = \"drop\"\n", "x.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("drop") && err.contains("redact"), "{err}");
        let err = from_str("[limitz]\n", "x.toml").unwrap_err().to_string();
        assert!(err.contains("limitz"), "{err}");
        let err = from_str("[prescan]\nunknown_module = \"ignore\"\n", "x.toml")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown_module"), "{err}");
    }

    #[test]
    fn a_store_url_is_read_and_never_shown_with_its_password() {
        let cfg = from_str("[store]\nurl = \"postgres://sg:pw@h/db\"\n", "inline").unwrap();
        assert_eq!(cfg.store.url.as_deref(), Some("postgres://sg:pw@h/db"));
        let shown = format!("{cfg:?}");
        assert!(shown.contains("postgres://sg:***@h/db"), "{shown}");
        assert!(!shown.contains(":pw@"), "{shown}");
        assert!(from_str("[store]\nuri = \"postgres://h/db\"\n", "inline").is_err());
        assert!(Config::default().store.url.is_none());
    }
}
