//! Memory and pids limits through cgroups: v2 when its memory and pids controllers are
//! available, else v1 (one hierarchy per controller), detected once at start.
//!
//! Each run gets its own cgroup, nested under the cgroup skillgate itself runs in (so the
//! host's own limits still apply), removed when the run ends.
use skillgate_core::ExecError;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// Which cgroup interface enforces the memory and pids limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CgroupMode {
    /// The unified hierarchy: `parent` is where run cgroups are created.
    V2 {
        /// The delegated parent of the run cgroups.
        parent: PathBuf,
    },
    /// Legacy hierarchies: one parent per controller.
    V1 {
        /// Parent in the memory hierarchy.
        memory: PathBuf,
        /// Parent in the pids hierarchy.
        pids: PathBuf,
    },
    /// Nothing usable; the reason names the setting and the fix.
    Unavailable(String),
}

impl CgroupMode {
    /// A short name for reports: `v2`, `v1` or `none`.
    pub fn name(&self) -> &'static str {
        match self {
            CgroupMode::V2 { .. } => "v2",
            CgroupMode::V1 { .. } => "v1",
            CgroupMode::Unavailable(_) => "none",
        }
    }

    /// Detects what this host offers.
    pub fn detect() -> CgroupMode {
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        // v2: a pure unified mount at /sys/fs/cgroup, or the hybrid one at .../unified.
        for mount in [
            PathBuf::from(CGROUP_ROOT),
            Path::new(CGROUP_ROOT).join("unified"),
        ] {
            let controllers =
                std::fs::read_to_string(mount.join("cgroup.controllers")).unwrap_or_default();
            let has = |c: &str| controllers.split_whitespace().any(|x| x == c);
            if has("memory") && has("pids") {
                let rel = own_path(&own, "").unwrap_or_default();
                let parent = mount.join(rel.trim_start_matches('/')).join("skillgate");
                if prepare_v2_parent(&mount, &parent).is_ok() {
                    return CgroupMode::V2 { parent };
                }
            }
        }
        let v1 = |ctl: &str| -> Option<PathBuf> {
            let mount = Path::new(CGROUP_ROOT).join(ctl);
            if !mount.join("cgroup.procs").exists() {
                return None;
            }
            let rel = own_path(&own, ctl).unwrap_or_default();
            let parent = mount.join(rel.trim_start_matches('/')).join("skillgate");
            std::fs::create_dir_all(&parent).ok()?;
            Some(parent)
        };
        match (v1("memory"), v1("pids")) {
            (Some(memory), Some(pids)) => CgroupMode::V1 { memory, pids },
            _ => CgroupMode::Unavailable(
                "no writable cgroup with the memory and pids controllers: on cgroup v2 enable them \
                 for skillgate's cgroup (echo '+memory +pids' > cgroup.subtree_control of its \
                 parent, or run under a systemd unit with Delegate=yes); on cgroup v1 mount the \
                 memory and pids hierarchies under /sys/fs/cgroup and run skillgate as root"
                    .into(),
            ),
        }
    }
}

/// The path in a `/proc/<pid>/cgroup` text of the hierarchy of controller `ctl` (v1), or
/// of the unified hierarchy when `ctl` is empty (v2).
fn own_path(proc_pid_cgroup: &str, ctl: &str) -> Option<String> {
    proc_pid_cgroup.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, ctls, path) = (parts.next()?, parts.next()?, parts.next()?);
        let matches = if ctl.is_empty() {
            ctls.is_empty()
        } else {
            ctls.split(',').any(|x| x == ctl)
        };
        matches.then(|| path.to_string())
    })
}

/// v2 forbids processes in inner nodes: `skillgate/` only holds run cgroups, with the
/// controllers enabled for them.
fn prepare_v2_parent(mount: &Path, parent: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(parent)?;
    // Enable down the path from the mount to the parent.
    let mut dir = parent.parent();
    let mut chain = Vec::new();
    while let Some(d) = dir {
        chain.push(d.to_path_buf());
        if d == mount {
            break;
        }
        dir = d.parent();
    }
    for d in chain.iter().rev() {
        let _ = std::fs::write(d.join("cgroup.subtree_control"), "+memory +pids");
    }
    std::fs::write(parent.join("cgroup.subtree_control"), "+memory +pids")
}

/// One run's cgroup(s), removed on drop.
#[derive(Debug)]
pub(crate) struct RunCgroup {
    dirs: Vec<PathBuf>,
    v2: bool,
    /// v1: each directory's `tasks` file, for the init to join by itself.
    tasks: Vec<std::fs::File>,
}

/// What the kernel reported about limits hit during a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LimitEvents {
    pub(crate) oom_kills: u64,
    pub(crate) memory_max_hits: u64,
    pub(crate) pids_max_hits: u64,
    pub(crate) peak_memory: u64,
}

fn write(path: &Path, value: &str) -> Result<(), ExecError> {
    std::fs::write(path, value)
        .map_err(|e| ExecError::io(format!("writing `{value}` to {}", path.display()), e))
}

fn read_key(path: &Path, key: &str) -> u64 {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            let mut it = l.split_whitespace();
            (it.next() == Some(key)).then(|| it.next()?.parse().ok())?
        })
        .unwrap_or(0)
}

fn read_num(path: &Path) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

impl RunCgroup {
    /// Creates the run's cgroup with its limits (`pids` counts the sandbox's init too).
    pub(crate) fn create(mode: &CgroupMode, memory: u64, pids: u32) -> Result<Self, ExecError> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(|| sweep(mode));
        let name = format!(
            "run-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let mk = |p: PathBuf| -> Result<PathBuf, ExecError> {
            std::fs::create_dir(&p)
                .map_err(|e| ExecError::io(format!("creating cgroup {}", p.display()), e))?;
            Ok(p)
        };
        let pids = (u64::from(pids) + 1).to_string();
        let memory = memory.to_string();
        match mode {
            CgroupMode::V2 { parent } => {
                let dir = mk(parent.join(&name))?;
                let cg = RunCgroup {
                    dirs: vec![dir.clone()],
                    v2: true,
                    tasks: Vec::new(),
                };
                write(&dir.join("memory.max"), &memory)?;
                // No swap: memory.max alone would let a bomb page out instead of dying.
                let _ = std::fs::write(dir.join("memory.swap.max"), "0");
                write(&dir.join("pids.max"), &pids)?;
                Ok(cg)
            }
            CgroupMode::V1 {
                memory: mparent,
                pids: pparent,
            } => {
                let mdir = mk(mparent.join(&name))?;
                let mut cg = RunCgroup {
                    dirs: vec![mdir.clone()],
                    v2: false,
                    tasks: Vec::new(),
                };
                cg.dirs.push(mk(pparent.join(&name))?);
                write(&mdir.join("memory.limit_in_bytes"), &memory)?;
                let memsw = mdir.join("memory.memsw.limit_in_bytes");
                if memsw.exists() {
                    write(&memsw, &memory)?;
                }
                write(&cg.dirs[1].join("pids.max"), &pids)?;
                for d in &cg.dirs {
                    let tasks = d.join("tasks");
                    let f = std::fs::OpenOptions::new()
                        .write(true)
                        .open(&tasks)
                        .map_err(|e| ExecError::io(format!("opening {}", tasks.display()), e))?;
                    cg.tasks.push(f);
                }
                Ok(cg)
            }
            CgroupMode::Unavailable(why) => Err(ExecError::HostUnsupported(why.clone())),
        }
    }

    /// The `tasks` files the sandbox's init writes `0` to, joining the run's cgroups by
    /// itself (v1: the pids hierarchy only, see [`skill_join_fd`](Self::skill_join_fd));
    /// empty when the parent moves it with [`place`](Self::place) (v2).
    pub(crate) fn init_join_fds(&self) -> Vec<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        self.tasks.iter().skip(1).map(AsRawFd::as_raw_fd).collect()
    }

    /// v1: the memory hierarchy's `tasks` file, which the interpreter process joins by
    /// itself before it execs. The init stays out of the memory cgroup, so the
    /// out-of-memory killer of a run only ever chooses among the skill's processes (an
    /// init charged with the host's pages, copied at the clone, would look the largest).
    /// v2 has one cgroup for both limits: the init is in it, and is protected by its
    /// `oom_score_adj` where the host may lower it.
    pub(crate) fn skill_join_fd(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        self.tasks.first().map(AsRawFd::as_raw_fd)
    }

    /// Moves `pid` into the run's cgroup on v2. On v1 it joins by itself (see
    /// [`join_fds`](Self::join_fds)) and there is nothing to do here.
    pub(crate) fn place(&self, pid: i32) -> Result<(), ExecError> {
        if self.v2 {
            write(&self.dirs[0].join("cgroup.procs"), &pid.to_string())?;
        }
        Ok(())
    }

    /// Checks that the init `pid` is in every one of the run's cgroups it joins (fail
    /// closed: a sandbox outside its cgroups runs without limits). On v1 the memory
    /// cgroup is the skill's alone: its interpreter process fails to start unless it
    /// joins it.
    pub(crate) fn confirm(&self, pid: i32) -> Result<(), ExecError> {
        let own = std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
            .map_err(|e| ExecError::io("reading the sandbox's cgroups", e))?;
        let hierarchies: &[&str] = if self.v2 { &[""] } else { &["memory", "pids"] };
        for (d, ctl) in self.dirs.iter().zip(hierarchies) {
            if *ctl == "memory" {
                continue;
            }
            let name = d.file_name().unwrap_or_default().to_string_lossy();
            let inside = own_path(&own, ctl).is_some_and(|p| p.rsplit('/').next() == Some(&*name));
            if !inside {
                return Err(ExecError::Other(format!(
                    "the sandbox is not in its cgroup {}",
                    d.display()
                )));
            }
        }
        Ok(())
    }

    /// Kills every process in the cgroup where the kernel offers it (v2 `cgroup.kill`).
    pub(crate) fn kill_all(&self) {
        if self.v2 {
            let _ = std::fs::write(self.dirs[0].join("cgroup.kill"), "1");
        }
    }

    /// Reads what limits were hit.
    pub(crate) fn events(&self) -> LimitEvents {
        if self.v2 {
            let d = &self.dirs[0];
            LimitEvents {
                oom_kills: read_key(&d.join("memory.events"), "oom_kill"),
                memory_max_hits: read_key(&d.join("memory.events"), "max"),
                pids_max_hits: read_key(&d.join("pids.events"), "max"),
                peak_memory: read_num(&d.join("memory.peak")),
            }
        } else {
            let (m, p) = (&self.dirs[0], &self.dirs[1]);
            LimitEvents {
                oom_kills: read_key(&m.join("memory.oom_control"), "oom_kill"),
                // With swap accounting the memory+swap counter, set to the same limit,
                // may be the one that refuses a charge.
                memory_max_hits: read_num(&m.join("memory.failcnt"))
                    + read_num(&m.join("memory.memsw.failcnt")),
                pids_max_hits: read_key(&p.join("pids.events"), "max"),
                peak_memory: read_num(&m.join("memory.max_usage_in_bytes")),
            }
        }
    }
}

/// Removes the empty run cgroups (`run-<pid>-<n>`) that hosts which are gone left behind
/// (a host killed with SIGKILL cannot remove its own): once per process, before its first
/// run. A cgroup still holding processes, or whose owner pid is alive, is left alone; one
/// named after this process is a leftover of an earlier process with the same pid (this
/// one has created none yet), and would make this process's runs fail to create theirs.
fn sweep(mode: &CgroupMode) {
    let parents: Vec<&PathBuf> = match mode {
        CgroupMode::V2 { parent } => vec![parent],
        CgroupMode::V1 { memory, pids } => vec![memory, pids],
        CgroupMode::Unavailable(_) => return,
    };
    for parent in parents {
        let Ok(entries) = std::fs::read_dir(parent) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(owner) = name.to_str().and_then(run_owner) else {
                continue;
            };
            if owner == std::process::id() || !Path::new(&format!("/proc/{owner}")).exists() {
                // rmdir fails on a cgroup with processes: only empty ones go.
                let _ = std::fs::remove_dir(entry.path());
            }
        }
    }
}

/// The owner pid in a run cgroup's name, `run-<pid>-<n>`.
fn run_owner(name: &str) -> Option<u32> {
    let (pid, seq) = name.strip_prefix("run-")?.split_once('-')?;
    seq.parse::<u64>().ok()?;
    pid.parse().ok()
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        for d in &self.dirs {
            // The kernel frees an emptied cgroup asynchronously: retry briefly.
            for _ in 0..50 {
                match std::fs::remove_dir(d) {
                    Ok(()) => break,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => break,
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(2)),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_path_finds_the_controller_line() {
        let s = "9:name=systemd:/\n4:memory:/a/b\n8:pids:/\n0::/u\n";
        assert_eq!(own_path(s, "memory").as_deref(), Some("/a/b"));
        assert_eq!(own_path(s, "").as_deref(), Some("/u"));
        assert_eq!(own_path(s, "cpu"), None);
        let joined = "3:cpu,cpuacct:/c\n";
        assert_eq!(own_path(joined, "cpuacct").as_deref(), Some("/c"));
        assert_eq!(own_path(joined, "cpuac"), None);
    }

    #[test]
    fn the_sweep_removes_leftovers_of_gone_hosts_only() {
        let t = tempfile::tempdir().unwrap();
        let own = std::process::id();
        // No pid reaches u32::MAX - 1 (pid_max is at most 2^22).
        let gone = u32::MAX - 1;
        let names = [
            format!("run-{own}-0"),
            format!("run-{gone}-3"),
            "run-1-0".to_string(),
            "unrelated".to_string(),
        ];
        for n in &names {
            std::fs::create_dir(t.path().join(n)).unwrap();
        }
        // A leftover that is not empty stays too.
        std::fs::create_dir(t.path().join(format!("run-{gone}-4"))).unwrap();
        std::fs::create_dir(t.path().join(format!("run-{gone}-4/busy"))).unwrap();
        sweep(&CgroupMode::V2 {
            parent: t.path().to_path_buf(),
        });
        let mut left: Vec<String> = std::fs::read_dir(t.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "run-1-0".to_string(),
                format!("run-{gone}-4"),
                "unrelated".into()
            ]
        );
    }

    #[test]
    fn run_cgroup_names_give_their_owner() {
        assert_eq!(run_owner("run-123-0"), Some(123));
        assert_eq!(run_owner("run-123-45"), Some(123));
        for other in ["run-123", "run--1", "run-x-1", "other-1-2", "run-1-2-3"] {
            assert_eq!(run_owner(other), None, "{other}");
        }
    }

    #[test]
    fn on_v1_the_init_joins_pids_and_the_skill_memory() {
        let t = tempfile::tempdir().unwrap();
        let open = |name: &str| std::fs::File::create(t.path().join(name)).unwrap();
        let cg = RunCgroup {
            dirs: Vec::new(),
            v2: false,
            tasks: vec![open("memory"), open("pids")],
        };
        use std::os::fd::AsRawFd;
        assert_eq!(cg.skill_join_fd(), Some(cg.tasks[0].as_raw_fd()));
        assert_eq!(cg.init_join_fds(), [cg.tasks[1].as_raw_fd()]);
    }

    #[test]
    fn confirm_refuses_a_process_outside_the_run_cgroups() {
        let name = "run-never-created";
        for v2 in [false, true] {
            let cg = RunCgroup {
                dirs: vec![
                    Path::new("/nonexistent/memory").join(name),
                    Path::new("/nonexistent/pids").join(name),
                ],
                v2,
                tasks: Vec::new(),
            };
            let pid = std::process::id() as i32;
            let e = cg.confirm(pid).unwrap_err().to_string();
            assert!(e.contains(name), "{e}");
        }
    }
}
