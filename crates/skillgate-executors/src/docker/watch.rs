//! Watching a container's cgroup counters while it runs, for what the engine does not
//! say (or not reliably):
//! - forks refused at the pids limit: neither Docker Engine nor Podman reports them (the
//!   fork fails inside, the container exits as the skill chooses), so without this a run
//!   that hit the limit ends `ok`;
//! - out-of-memory kills: under gVisor (`runsc`) the host's memory cgroup kills the
//!   sandbox itself at the limit, and Docker Engine misses that event now and then (the
//!   container ends 137 with `OOMKilled` false); Podman never sets the flag.
//!
//! The watch reads the counters (`pids.events`' `max`; cgroup v1 `memory.oom_control`,
//! v2 `memory.events`, `oom_kill`) every few milliseconds from before the container
//! starts until the run ends: the engine removes the cgroup shortly after the container
//! exits, so they are read while they can be. A counter above zero is the kernel's word:
//! only that is taken as a refused fork or an out-of-memory kill, never a bare exit code.
//! Where no file is readable (another driver's layout, a remote engine) the watch sees
//! nothing and the engine's own word alone decides.
use super::Flavour;
use crate::limits::key_value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How often the counters are read.
const TICK: Duration = Duration::from_millis(5);

/// One counter: the files that may hold it (one per cgroup layout) and its key.
#[derive(Debug, Clone)]
pub(crate) struct Counter {
    files: Vec<PathBuf>,
    key: &'static str,
}

impl Counter {
    /// Its value above zero in one of its files.
    fn counted(&self) -> bool {
        self.files.iter().any(|f| {
            std::fs::read_to_string(f)
                .ok()
                .and_then(|t| key_value(&t, self.key))
                .is_some_and(|n| n > 0)
        })
    }
}

/// The cgroup directories (relative to a controller's mount, or to the v2 root) of
/// container `id`: Docker Engine's cgroupfs and systemd layouts, Podman's
/// (`cgroup_manager` cgroupfs or systemd).
fn cgroup_dirs(id: &str, flavour: Flavour) -> Vec<String> {
    match flavour {
        Flavour::Docker => vec![
            format!("docker/{id}"),
            format!("system.slice/docker-{id}.scope"),
        ],
        Flavour::Podman => vec![
            format!("libpod_parent/libpod-{id}"),
            format!("machine.slice/libpod-{id}.scope"),
        ],
    }
}

/// The out-of-memory and refused-fork counters of container `id` under the cgroup root
/// `root` (cgroup v1 and v2).
pub(crate) fn counters(root: &Path, id: &str, flavour: Flavour) -> (Counter, Counter) {
    let dirs = cgroup_dirs(id, flavour);
    let mut oom = Vec::new();
    let mut pids = Vec::new();
    for d in &dirs {
        oom.push(root.join("memory").join(d).join("memory.oom_control"));
        oom.push(root.join(d).join("memory.events"));
        pids.push(root.join("pids").join(d).join("pids.events"));
        pids.push(root.join(d).join("pids.events"));
    }
    (
        Counter {
            files: oom,
            key: "oom_kill",
        },
        Counter {
            files: pids,
            key: "max",
        },
    )
}

/// A running watch; stopped when dropped.
pub(crate) struct CgroupWatch {
    oom: Arc<AtomicBool>,
    pids: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl CgroupWatch {
    /// Watches the two counters until each has counted (or the watch is dropped).
    pub(crate) fn start((oom, pids): (Counter, Counter)) -> CgroupWatch {
        let seen = [
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        ];
        let flags = seen.clone();
        let task = tokio::spawn(async move {
            let mut tick = tokio::time::interval(TICK);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let counters = [oom, pids];
            loop {
                tick.tick().await;
                let mut all = true;
                for (counter, flag) in counters.iter().zip(&flags) {
                    if !flag.load(Ordering::SeqCst) && counter.counted() {
                        flag.store(true, Ordering::SeqCst);
                    }
                    all &= flag.load(Ordering::SeqCst);
                }
                if all {
                    return;
                }
            }
        });
        let [oom, pids] = seen;
        CgroupWatch { oom, pids, task }
    }

    /// The kernel killed in the container's memory cgroup for memory.
    pub(crate) fn oom_seen(&self) -> bool {
        self.oom.load(Ordering::SeqCst)
    }

    /// The kernel refused a fork in the container's pids cgroup.
    pub(crate) fn pids_seen(&self) -> bool {
        self.pids.load(Ordering::SeqCst)
    }
}

impl Drop for CgroupWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn until(what: impl Fn() -> bool) {
        while !what() {
            tokio::time::sleep(TICK).await;
        }
    }

    #[tokio::test]
    async fn sees_each_counter_only_once_it_counts_and_keeps_it_after_the_cgroup_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let id = "abc";
        let watch = CgroupWatch::start(counters(dir.path(), id, Flavour::Docker));
        let memory = dir.path().join("memory/docker/abc");
        let pids = dir.path().join("pids/docker/abc");
        std::fs::create_dir_all(&memory).unwrap();
        std::fs::create_dir_all(&pids).unwrap();
        std::fs::write(
            memory.join("memory.oom_control"),
            "under_oom 0\noom_kill 0\n",
        )
        .unwrap();
        std::fs::write(pids.join("pids.events"), "max 0\n").unwrap();
        tokio::time::sleep(TICK * 4).await;
        assert!(
            !watch.oom_seen() && !watch.pids_seen(),
            "zero counters are nothing"
        );
        std::fs::write(pids.join("pids.events"), "max 3\n").unwrap();
        until(|| watch.pids_seen()).await;
        assert!(!watch.oom_seen());
        std::fs::write(
            memory.join("memory.oom_control"),
            "under_oom 0\noom_kill 1\n",
        )
        .unwrap();
        until(|| watch.oom_seen()).await;
        std::fs::remove_dir_all(dir.path().join("memory")).unwrap();
        std::fs::remove_dir_all(dir.path().join("pids")).unwrap();
        assert!(watch.oom_seen() && watch.pids_seen(), "seen stays seen");
    }

    #[tokio::test]
    async fn podman_and_cgroup_v2_layouts_are_read_too() {
        let dir = tempfile::tempdir().unwrap();
        let watch = CgroupWatch::start(counters(dir.path(), "abc", Flavour::Podman));
        let v2 = dir.path().join("libpod_parent/libpod-abc");
        std::fs::create_dir_all(&v2).unwrap();
        std::fs::write(v2.join("pids.events"), "max 1\n").unwrap();
        until(|| watch.pids_seen()).await;
        let v1 = dir.path().join("memory/libpod_parent/libpod-abc");
        std::fs::create_dir_all(&v1).unwrap();
        std::fs::write(v1.join("memory.oom_control"), "oom_kill 2\n").unwrap();
        until(|| watch.oom_seen()).await;
    }
}
