//! The sandbox spec: what the isolation, seccomp and network layers decide and the executor
//! enforces.
use crate::OperatorStatement;
use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Resource limits of one run. Every field is enforced by the executor or the run is
/// refused (see [`crate::Capabilities`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Wall-clock limit; the whole process tree is killed when it passes.
    #[serde(with = "crate::units::duration")]
    pub wall_timeout: Duration,
    /// CPU time limit (RLIMIT_CPU), if any.
    #[serde(default, with = "crate::units::opt_duration")]
    pub cpu_time: Option<Duration>,
    /// Memory limit in bytes (cgroup memory, or address space as a weaker fallback).
    #[serde(with = "crate::units::size")]
    pub memory_bytes: u64,
    /// Maximum number of processes and threads.
    pub pids: u32,
    /// Largest file the skill may write (RLIMIT_FSIZE), in bytes.
    #[serde(with = "crate::units::size")]
    pub file_size_bytes: u64,
    /// Maximum open file descriptors (RLIMIT_NOFILE).
    pub open_files: u32,
    /// Bytes of stdout kept; the rest is drained, dropped and flagged truncated.
    #[serde(with = "crate::units::size")]
    pub stdout_cap: u64,
    /// Bytes of stderr kept; likewise.
    #[serde(with = "crate::units::size")]
    pub stderr_cap: u64,
    /// Largest single artifact collected, in bytes.
    #[serde(with = "crate::units::size")]
    pub artifact_file_cap: u64,
    /// Total bytes of artifacts collected.
    #[serde(with = "crate::units::size")]
    pub artifact_total_cap: u64,
    /// Size of the writable work directory (tmpfs), in bytes.
    #[serde(with = "crate::units::size")]
    pub workdir_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        const MIB: u64 = 1024 * 1024;
        Limits {
            wall_timeout: Duration::from_secs(10),
            cpu_time: Some(Duration::from_secs(10)),
            memory_bytes: 256 * MIB,
            pids: 64,
            file_size_bytes: 16 * MIB,
            open_files: 256,
            stdout_cap: MIB,
            stderr_cap: MIB,
            artifact_file_cap: 8 * MIB,
            artifact_total_cap: 32 * MIB,
            workdir_bytes: 64 * MIB,
        }
    }
}

/// The isolation a run needs at least. Ordered from weakest to strongest; an executor
/// declares the strongest tier it provides.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum RuntimeTier {
    /// A plain child process with rlimits: no isolation. Only for trusted code.
    Process,
    /// Linux namespaces, a fresh root, seccomp, landlock, cgroups: the native sandbox.
    #[default]
    Namespace,
    /// An OCI container runtime (runc, crun, gVisor's runsc).
    Container,
    /// A micro-VM (Firecracker, Kata).
    MicroVm,
}

impl RuntimeTier {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            RuntimeTier::Process => "process",
            RuntimeTier::Namespace => "namespace",
            RuntimeTier::Container => "container",
            RuntimeTier::MicroVm => "micro_vm",
        }
    }
}

/// An inclusive port range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PortRange {
    /// First port.
    pub start: u16,
    /// Last port (inclusive).
    pub end: u16,
}

/// One allowed destination: a network and, optionally, ports.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkDestination {
    /// The destination network (an IP literal is a /32 or /128).
    pub cidr: IpNet,
    /// Allowed ports; empty means every port.
    #[serde(default)]
    pub ports: Vec<PortRange>,
    /// A hostname, only for platforms that resolve names themselves (never resolved here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// What a run may reach over the network.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "mode", content = "allow")]
pub enum NetworkPolicy {
    /// Nothing: an empty network namespace (loopback only). The default.
    #[default]
    None,
    /// Only these destinations.
    AllowList(Vec<NetworkDestination>),
}

impl NetworkPolicy {
    /// `true` for [`NetworkPolicy::None`].
    pub fn is_none(&self) -> bool {
        matches!(self, NetworkPolicy::None)
    }
}

/// What happens when a system call matches (or no rule matches, for the default action).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "action", content = "errno")]
pub enum SeccompAction {
    /// Let the call through.
    Allow,
    /// Fail the call with this errno (EPERM is 1).
    Errno(u32),
    /// Kill the whole process (reported as `security_violation`).
    KillProcess,
    /// Allow and log.
    Log,
}

/// A comparison on one system call argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgOp {
    /// `arg == value`
    Eq,
    /// `arg != value`
    Ne,
    /// `arg < value`
    Lt,
    /// `arg <= value`
    Le,
    /// `arg > value`
    Gt,
    /// `arg >= value`
    Ge,
    /// `arg & mask == value`
    MaskedEq(u64),
}

/// A condition on argument `index` (0-based) of a system call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgCondition {
    /// Which argument, 0 to 5.
    pub index: u8,
    /// The comparison.
    pub op: ArgOp,
    /// The value compared with.
    pub value: u64,
}

/// One rule of a seccomp profile: these calls, when every condition holds, get this action.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyscallRule {
    /// System call names (as in the kernel's tables: `openat`, `clone3`).
    pub names: Vec<String>,
    /// What happens.
    pub action: SeccompAction,
    /// Conditions that must all hold; empty means always.
    #[serde(default)]
    pub args: Vec<ArgCondition>,
}

/// A seccomp profile, independent of architecture: resolved per architecture when compiled
/// to BPF or emitted for a platform.
///
/// Meaning: a system call gets the **most restrictive** action among the rules that match
/// it (name, and every argument condition), ranked as the kernel ranks them:
/// `kill_process` > `errno` > `log` > `allow`; between two matching errno rules the one
/// listed first wins. A call that no rule matches gets `default_action`. These are the
/// semantics of stacked kernel filters, which is how `skillgate-confine` enforces a profile
/// (one seccompiler filter per non-allow action, then one for the default); its
/// `profile::evaluate` is the reference implementation. A name that an architecture lacks
/// (`open` on aarch64) is left out there; a name no supported architecture has is an error.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeccompProfile {
    /// The preset or profile name, for reports.
    pub name: String,
    /// Action for calls that no rule matches.
    pub default_action: SeccompAction,
    /// The rules.
    pub syscalls: Vec<SyscallRule>,
}

impl SeccompProfile {
    /// Whether any call can end the process (`kill_process`, by a rule or by default):
    /// an executor must claim [`crate::Capabilities::seccomp_kill`] to run it.
    pub fn kills(&self) -> bool {
        self.default_action == SeccompAction::KillProcess
            || self
                .syscalls
                .iter()
                .any(|r| r.action == SeccompAction::KillProcess)
    }
}

/// Everything the executor must enforce for one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SandboxSpec {
    /// Resource limits.
    pub limits: Limits,
    /// User id inside the sandbox.
    pub uid: u32,
    /// Group id inside the sandbox.
    pub gid: u32,
    /// Network policy (the network layer fills it; default none).
    pub network: NetworkPolicy,
    /// Seccomp profile (the seccomp layer fills it; `None` means no filter was decided).
    pub seccomp: Option<SeccompProfile>,
    /// The environment the skill sees, rebuilt from an allow-list (nothing of the caller's).
    pub env: BTreeMap<String, String>,
    /// The least isolation the run needs.
    pub runtime: RuntimeTier,
    /// Extra host paths made visible read-only (a virtualenv, a data set).
    pub read_only_paths: Vec<PathBuf>,
    /// The interpreter of the skill's runtime, when it has one: the executor runs it
    /// instead of its own interpreter for the skill's language (see `skillgate-runtime`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interpreter: Option<RuntimeInterpreter>,
    /// A host directory the run may change: a session's workspace, mounted writable at
    /// [`WORKSPACE_DIR`] (never executable) and the run's working directory. `None` for
    /// a plain run. An executor that cannot mount it refuses the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<Workspace>,
    /// The operator's statement the isolation layer relied on to let this run proceed
    /// on an executor that does not enforce everything the spec asks for itself (see
    /// [`OperatorStatement`]); `None` when the executor enforces it all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relied_on: Option<OperatorStatement>,
}

/// Where a session's workspace appears inside the sandbox.
pub const WORKSPACE_DIR: &str = "/workspace";

/// A writable host directory a run works in (see [`SandboxSpec::workspace`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workspace {
    /// The host directory (absolute). Its whole tree is handed to the sandbox user.
    pub host: PathBuf,
    /// The working directory, relative to the workspace (`""` is its root).
    #[serde(default)]
    pub cwd: String,
}

/// The interpreter an installed runtime provides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeInterpreter {
    /// The runtime's name (`python-data`), for messages.
    pub runtime: String,
    /// The path to execute, as is: a virtualenv's `bin/python3` is a link to the base
    /// interpreter, and Python finds the virtualenv from the path it was started by, so
    /// it must not be canonicalised.
    pub program: PathBuf,
    /// The base interpreter's installation prefix (`/usr`), made visible read-only.
    pub prefix: PathBuf,
    /// The runtime's own tree (a virtualenv) holding `program`, when it has one. A
    /// sandbox mounts it read-only at a fixed place of its own and runs `program` from
    /// there, so the tree works wherever it is installed on the host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<PathBuf>,
}

impl Default for SandboxSpec {
    fn default() -> Self {
        let mut env = BTreeMap::new();
        env.insert("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into());
        env.insert("LANG".into(), "C.UTF-8".into());
        env.insert("HOME".into(), "/work".into());
        SandboxSpec {
            limits: Limits::default(),
            uid: 1000,
            gid: 1000,
            network: NetworkPolicy::None,
            seccomp: None,
            env,
            runtime: RuntimeTier::default(),
            read_only_paths: Vec::new(),
            interpreter: None,
            workspace: None,
            relied_on: None,
        }
    }
}
