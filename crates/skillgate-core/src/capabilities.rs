use crate::{NetworkPolicy, RuntimeTier, SandboxSpec};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What an executor can enforce. The isolation layer compares a [`SandboxSpec`] with it and
/// refuses, rather than weakens, a run the executor cannot contain.
///
/// ```
/// use skillgate_core::{Capabilities, SandboxSpec, RuntimeTier};
/// let caps = Capabilities::none();
/// let spec = SandboxSpec::default(); // asks for the namespace tier
/// let missing = caps.check(&spec).unwrap_err();
/// assert!(missing.iter().any(|m| m.requirement == "runtime tier"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// The executor's name, for messages.
    pub executor: String,
    /// The strongest isolation it provides.
    pub tier: RuntimeTier,
    /// It kills the whole process tree at the wall-clock limit.
    pub wall_timeout: bool,
    /// It enforces a CPU-time limit.
    pub cpu_time: bool,
    /// It enforces a memory limit.
    pub memory: bool,
    /// It enforces a process/thread count limit.
    pub pids: bool,
    /// It reports a run whose forks were refused at that limit (`resource_exhausted`,
    /// `limit.pids`), as it reports the memory limit's kill. Not a containment claim (the
    /// limit holds either way), so the isolation layer does not require it; gVisor
    /// refuses the forks in its own kernel, out of the host's sight.
    #[serde(default)]
    pub pids_reported: bool,
    /// It enforces a file-size limit.
    pub file_size: bool,
    /// It enforces the open-files limit.
    pub open_files: bool,
    /// It caps captured output.
    pub output_caps: bool,
    /// It caps the work directory's size.
    pub workdir_size: bool,
    /// It runs the skill as the spec's uid/gid.
    pub user: bool,
    /// It installs a seccomp profile.
    pub seccomp: bool,
    /// Its seccomp can kill the process on a call (`kill_process`), not only make it
    /// fail (gVisor's runsc cannot load that action).
    #[serde(default)]
    pub seccomp_kill: bool,
    /// It can give a run no network at all.
    pub network_none: bool,
    /// It can enforce a destination allow-list.
    pub network_allow_list: bool,
    /// It rebuilds the environment from the spec alone.
    pub clean_env: bool,
    /// It mounts a session's workspace writable (`SandboxSpec::workspace`).
    #[serde(default)]
    pub workspace: bool,
}

/// One requirement of a spec that an executor cannot enforce.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unenforceable {
    /// What the spec asks for, e.g. `"memory limit"`.
    pub requirement: String,
    /// Why it cannot be enforced.
    pub reason: String,
}

impl fmt::Display for Unenforceable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.requirement, self.reason)
    }
}

impl Capabilities {
    /// An executor that enforces nothing (the honest answer for a black box).
    pub fn none() -> Self {
        Capabilities {
            executor: "unknown".into(),
            tier: RuntimeTier::Process,
            wall_timeout: false,
            cpu_time: false,
            memory: false,
            pids: false,
            pids_reported: false,
            file_size: false,
            open_files: false,
            output_caps: false,
            workdir_size: false,
            user: false,
            seccomp: false,
            seccomp_kill: false,
            network_none: false,
            network_allow_list: false,
            clean_env: false,
            workspace: false,
        }
    }

    /// Checks a spec: `Ok` when every requirement is enforceable, else every one that is not.
    pub fn check(&self, spec: &SandboxSpec) -> Result<(), Vec<Unenforceable>> {
        let mut missing = Vec::new();
        let mut need = |ok: bool, requirement: &str, reason: String| {
            if !ok {
                missing.push(Unenforceable {
                    requirement: requirement.into(),
                    reason,
                });
            }
        };
        let ex = &self.executor;
        need(
            self.tier >= spec.runtime,
            "runtime tier",
            format!(
                "the spec needs `{}` isolation, executor `{ex}` provides `{}`",
                spec.runtime.as_str(),
                self.tier.as_str()
            ),
        );
        need(
            self.wall_timeout,
            "wall-clock limit",
            format!("executor `{ex}` cannot kill the run at a deadline"),
        );
        need(
            spec.limits.cpu_time.is_none() || self.cpu_time,
            "cpu-time limit",
            format!("executor `{ex}` cannot limit CPU time"),
        );
        need(
            self.memory,
            "memory limit",
            format!("executor `{ex}` cannot limit memory"),
        );
        need(
            self.pids,
            "pids limit",
            format!("executor `{ex}` cannot limit the number of processes"),
        );
        need(
            self.file_size,
            "file-size limit",
            format!("executor `{ex}` cannot limit file size"),
        );
        need(
            self.open_files,
            "open-files limit",
            format!("executor `{ex}` cannot limit open files"),
        );
        need(
            self.output_caps,
            "output caps",
            format!("executor `{ex}` cannot cap output"),
        );
        need(
            self.workdir_size,
            "work directory size",
            format!("executor `{ex}` cannot cap the work directory"),
        );
        need(
            self.user,
            "user",
            format!(
                "executor `{ex}` cannot run as uid {} gid {}",
                spec.uid, spec.gid
            ),
        );
        need(
            spec.seccomp.is_none() || self.seccomp,
            "seccomp profile",
            format!("executor `{ex}` cannot install a seccomp filter"),
        );
        if let Some(profile) = &spec.seccomp {
            need(
                !self.seccomp || !profile.kills() || self.seccomp_kill,
                "seccomp kill action",
                format!(
                    "executor `{ex}` cannot kill the process on a system call (profile `{}` \
                     has kill_process); use a profile whose actions are errno",
                    profile.name
                ),
            );
        }
        match &spec.network {
            NetworkPolicy::None => need(
                self.network_none,
                "network none",
                format!("executor `{ex}` cannot cut the network off"),
            ),
            NetworkPolicy::AllowList(_) => need(
                self.network_allow_list,
                "network allow-list",
                format!("executor `{ex}` cannot enforce a destination allow-list"),
            ),
        }
        need(
            self.clean_env,
            "clean environment",
            format!("executor `{ex}` cannot rebuild the environment"),
        );
        need(
            spec.workspace.is_none() || self.workspace,
            "workspace",
            format!("executor `{ex}` cannot mount a session's workspace"),
        );
        if missing.is_empty() {
            Ok(())
        } else {
            Err(missing)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_needs_an_executor_that_mounts_one() {
        let mut caps = Capabilities::none();
        caps.executor = "x".into();
        let mut spec = SandboxSpec::default();
        let without = caps.check(&spec).unwrap_err();
        assert!(!without.iter().any(|m| m.requirement == "workspace"));
        spec.workspace = Some(crate::Workspace {
            host: "/tmp/ws".into(),
            cwd: String::new(),
        });
        let with = caps.check(&spec).unwrap_err();
        assert!(
            with.iter().any(|m| m.requirement == "workspace"),
            "{with:?}"
        );
        caps.workspace = true;
        let with = caps.check(&spec).unwrap_err();
        assert!(!with.iter().any(|m| m.requirement == "workspace"));
    }

    #[test]
    fn a_kill_action_needs_an_executor_whose_seccomp_can_kill() {
        use crate::{SeccompAction, SeccompProfile, SyscallRule};
        let mut caps = Capabilities::none();
        caps.seccomp = true;
        let mut spec = SandboxSpec::default();
        let errno = SeccompProfile {
            name: "p".into(),
            default_action: SeccompAction::Allow,
            syscalls: vec![SyscallRule {
                names: vec!["mkdir".into()],
                action: SeccompAction::Errno(1),
                args: Vec::new(),
            }],
        };
        let kill = |in_rule: bool| {
            let mut p = errno.clone();
            if in_rule {
                p.syscalls[0].action = SeccompAction::KillProcess;
            } else {
                p.default_action = SeccompAction::KillProcess;
            }
            p
        };
        let refused = |caps: &Capabilities, spec: &SandboxSpec| {
            caps.check(spec)
                .unwrap_err()
                .iter()
                .any(|m| m.requirement == "seccomp kill action")
        };
        spec.seccomp = Some(errno.clone());
        assert!(!errno.kills());
        assert!(!refused(&caps, &spec));
        for in_rule in [true, false] {
            spec.seccomp = Some(kill(in_rule));
            assert!(kill(in_rule).kills());
            assert!(refused(&caps, &spec), "in a rule: {in_rule}");
            caps.seccomp_kill = true;
            assert!(!refused(&caps, &spec));
            caps.seccomp_kill = false;
        }
    }
}

/// The rlimits a node's runtime sets on every container (a Kubernetes node's base OCI
/// spec: `[executor.node_rlimits]`), for executors that cannot set a run's own.
///
/// ```
/// use skillgate_core::{Limits, NodeRlimits};
/// let node = NodeRlimits { cpu_secs: 10, file_size: 16 << 20, open_files: 256 };
/// assert!(node.looser_than(&Limits::default()).is_none());
/// let strict = Limits { open_files: 64, ..Limits::default() };
/// assert!(node.looser_than(&strict).unwrap().contains("256 open files"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeRlimits {
    /// `RLIMIT_CPU`, seconds.
    pub cpu_secs: u64,
    /// `RLIMIT_FSIZE`, bytes.
    pub file_size: u64,
    /// `RLIMIT_NOFILE`.
    pub open_files: u32,
}

impl NodeRlimits {
    /// Why these cannot hold a run to `limits` (one of them is looser), if so.
    pub fn looser_than(&self, limits: &crate::Limits) -> Option<String> {
        let mut loose = Vec::new();
        if limits
            .cpu_time
            .is_some_and(|c| self.cpu_secs > c.as_secs().max(1))
        {
            loose.push(format!("CPU time {} s", self.cpu_secs));
        }
        if self.file_size > limits.file_size_bytes {
            loose.push(format!(
                "file size {}",
                crate::units::format_size(self.file_size)
            ));
        }
        if self.open_files > limits.open_files {
            loose.push(format!("{} open files", self.open_files));
        }
        (!loose.is_empty()).then(|| {
            format!(
                "the node's rlimits ({}) are looser than the run's, and Node cannot lower \
                 them itself",
                loose.join(", ")
            )
        })
    }
}
