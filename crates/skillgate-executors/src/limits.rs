//! What the kernel counted in a container's cgroup, and what that makes of a run: an
//! out-of-memory kill or a refused fork is `resource_exhausted`, with the limit's finding,
//! as on the native sandbox. Shared by the executors that read the counters (Docker
//! Engine and Podman while the container runs, OCI runtimes after it).
use skillgate_core::{ExecOutcome, Finding, LayerName, Limits, Severity, Status, units};
#[cfg(feature = "oci")]
use std::path::Path;

/// The value of the line `key N` in a cgroup file's text (`memory.events`,
/// `memory.oom_control`, `pids.events`), if it has one.
pub(crate) fn key_value(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

/// The value of the line `key N` in the file `path` (0 when absent or unreadable).
#[cfg(feature = "oci")]
pub(crate) fn read_key(path: &Path, key: &str) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| key_value(&t, key))
        .unwrap_or(0)
}

/// Marks `outcome` for what the counters saw: killed at the memory limit (`oom`), or
/// forks refused at the pids limit (`pids`, when the run was otherwise `ok`: a timeout
/// or a seccomp kill says more).
pub(crate) fn apply(outcome: &mut ExecOutcome, oom: bool, pids: bool, limits: &Limits) {
    let finding =
        |rule: &str, msg: String| Finding::new(LayerName::Executor, rule, Severity::High, msg);
    if oom {
        outcome.status = Status::ResourceExhausted;
        outcome.findings = vec![finding(
            "limit.memory",
            format!(
                "killed at the {} memory limit",
                units::format_size(limits.memory_bytes)
            ),
        )];
    } else if pids && outcome.status == Status::Ok {
        outcome.status = Status::ResourceExhausted;
        outcome.findings.push(finding(
            "limit.pids",
            format!(
                "tried to start more than {} processes or threads",
                limits.pids
            ),
        ));
    }
}

/// The host processes and threads of gVisor's sandbox counted in the container's pids
/// cgroup on top of the skill's limit: its own (the Go runtime, the gofer) plus, on the
/// ptrace platform, host tasks backing each of the skill's (a sandbox that hits the host
/// limit dies with exit 2 and no output). The skill's own processes are held to its
/// limit by `RLIMIT_NPROC` in the sandbox's kernel.
pub fn runsc_host_pids(pids: u32) -> u32 {
    128u32.saturating_add(pids.saturating_mul(3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_counters_of_either_cgroup_version() {
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n";
        let v2 = "low 0\nhigh 0\nmax 12\noom 1\noom_kill 2\noom_group_kill 0\n";
        assert_eq!(key_value(v1, "oom_kill"), Some(1));
        assert_eq!(key_value(v2, "oom_kill"), Some(2));
        assert_eq!(key_value("max 3\n", "max"), Some(3));
        assert_eq!(
            key_value("oom_kill_disable 0\nunder_oom 0\n", "oom_kill"),
            None
        );
    }

    #[test]
    fn a_refused_fork_marks_only_a_run_that_was_ok() {
        let limits = Limits::default();
        let mut ok = ExecOutcome {
            status: Status::Ok,
            ..ExecOutcome::default()
        };
        apply(&mut ok, false, true, &limits);
        assert_eq!(ok.status, Status::ResourceExhausted);
        assert_eq!(ok.findings[0].rule_id, "limit.pids");
        let mut timeout = ExecOutcome {
            status: Status::Timeout,
            ..ExecOutcome::default()
        };
        apply(&mut timeout, false, true, &limits);
        assert_eq!(timeout.status, Status::Timeout);
        let mut oom = ExecOutcome {
            status: Status::Ok,
            ..ExecOutcome::default()
        };
        apply(&mut oom, true, true, &limits);
        assert_eq!(oom.findings.len(), 1);
        assert_eq!(oom.findings[0].rule_id, "limit.memory");
    }
}
