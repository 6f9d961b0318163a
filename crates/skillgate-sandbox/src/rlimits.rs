//! Resource limits applied in the child before exec.
use skillgate_core::Limits;

use rustix::process::{Resource, Rlimit, setrlimit};

/// Limits computed before the fork, applied in the child without allocating.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RlimitSet {
    entries: [(Resource, u64, u64); 4],
    len: usize,
}

impl RlimitSet {
    pub(crate) fn from_limits(l: &Limits) -> Self {
        let mut entries = [(Resource::Core, 0u64, 0u64); 4];
        let mut len = 1; // no core dumps, ever
        let mut push = |r: Resource, soft: u64, hard: u64| {
            entries[len] = (r, soft, hard);
            len += 1;
        };
        push(Resource::Fsize, l.file_size_bytes, l.file_size_bytes);
        let nofile = u64::from(l.open_files);
        push(Resource::Nofile, nofile, nofile);
        if let Some(cpu) = l.cpu_time {
            // Whole seconds, rounded up: a limit of 0 would kill at once.
            // The soft limit sends SIGXCPU; one second later the hard limit sends SIGKILL, so a
            // skill that catches SIGXCPU still ends.
            let secs = cpu.as_secs() + u64::from(cpu.subsec_nanos() > 0);
            push(Resource::Cpu, secs.max(1), secs.max(1) + 1);
        }
        RlimitSet { entries, len }
    }

    /// Applies every limit; async-signal-safe (system calls only).
    pub(crate) fn apply(&self) -> std::io::Result<()> {
        for &(resource, soft, hard) in &self.entries[..self.len] {
            setrlimit(
                resource,
                Rlimit {
                    current: Some(soft),
                    maximum: Some(hard),
                },
            )
            .map_err(std::io::Error::from)?;
        }
        Ok(())
    }
}
