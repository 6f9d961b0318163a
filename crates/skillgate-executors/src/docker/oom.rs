//! Watching a container's memory cgroup for the kernel's out-of-memory kills, where the
//! engine's own `OOMKilled` flag is not reliable: under gVisor (`runsc`) the host's
//! memory cgroup kills the sandbox itself at the limit, and Docker Engine misses that
//! event now and then (the container ends 137 with `OOMKilled` false).
//!
//! The watch reads the cgroup's `oom_kill` counter (cgroup v1 `memory.oom_control`, v2
//! `memory.events`) every few milliseconds from before the container starts until the
//! run ends; the cgroup is removed shortly after the container exits, so the counter is
//! read while it can be. A counter above zero is the kernel's word that it killed in
//! that cgroup for memory: only that, never a bare SIGKILL, is taken as out of memory.
//! Where no cgroup file is readable (another driver's layout, a remote engine) the watch
//! sees nothing and the engine's flag alone decides.
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How often the counter is read.
const TICK: Duration = Duration::from_millis(5);

/// The files that may hold the `oom_kill` counter of container `id` under the cgroup
/// root `root`: Docker Engine's cgroupfs and systemd layouts, cgroup v1 and v2.
pub(crate) fn counter_files(root: &Path, id: &str) -> Vec<PathBuf> {
    let scope = format!("system.slice/docker-{id}.scope");
    vec![
        root.join("memory/docker")
            .join(id)
            .join("memory.oom_control"),
        root.join("docker").join(id).join("memory.events"),
        root.join("memory").join(&scope).join("memory.oom_control"),
        root.join(&scope).join("memory.events"),
    ]
}

/// The `oom_kill` counter of a `memory.oom_control` or `memory.events` text.
pub(crate) fn oom_kills(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("oom_kill "))
        .and_then(|n| n.trim().parse().ok())
}

/// A running watch; stopped when dropped.
pub(crate) struct OomWatch {
    seen: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl OomWatch {
    /// Watches `files` until one shows an `oom_kill` counter above zero.
    pub(crate) fn start(files: Vec<PathBuf>) -> OomWatch {
        let seen = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&seen);
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(TICK);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let killed = files.iter().any(|f| {
                    std::fs::read_to_string(f)
                        .ok()
                        .and_then(|t| oom_kills(&t))
                        .is_some_and(|n| n > 0)
                });
                if killed {
                    flag.store(true, Ordering::SeqCst);
                    return;
                }
            }
        });
        OomWatch { seen, task }
    }

    /// The kernel killed in the container's memory cgroup for memory.
    pub(crate) fn seen(&self) -> bool {
        self.seen.load(Ordering::SeqCst)
    }
}

impl Drop for OomWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_counter_of_either_cgroup_version() {
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n";
        let v2 = "low 0\nhigh 0\nmax 12\noom 1\noom_kill 2\noom_group_kill 0\n";
        assert_eq!(oom_kills(v1), Some(1));
        assert_eq!(oom_kills(v2), Some(2));
        assert_eq!(oom_kills("oom_kill_disable 0\nunder_oom 0\n"), None);
    }

    #[tokio::test]
    async fn sees_a_kill_only_once_the_counter_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let files = counter_files(dir.path(), "abc");
        let watch = OomWatch::start(files.clone());
        std::fs::create_dir_all(files[0].parent().unwrap()).unwrap();
        std::fs::write(&files[0], "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n").unwrap();
        tokio::time::sleep(TICK * 4).await;
        assert!(!watch.seen(), "a zero counter is no kill");
        std::fs::write(&files[0], "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n").unwrap();
        // Read until the watch has seen it (it reads every tick).
        while !watch.seen() {
            tokio::time::sleep(TICK).await;
        }
        std::fs::remove_dir_all(dir.path().join("memory")).unwrap();
        assert!(watch.seen(), "the kill stays seen after the cgroup is gone");
    }
}
