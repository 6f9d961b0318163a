//! One run's OCI bundle: its `config.json` (built from the [`SandboxSpec`]), its `/etc`,
//! and the shared read-only root every bundle points at.
//!
//! | path in the container | what | how |
//! |---|---|---|
//! | `/` | an empty directory of the executor's state root, made once | read-only root |
//! | `/usr`, `/bin`, `/sbin`, `/lib*` | the host's system directories (a symbolic link such as Debian's `/bin → usr/bin` is kept as a link in the root) | read-only binds |
//! | interpreter prefix, extra read-only paths | where not inside the system directories | read-only binds of exactly that path |
//! | `/runtime` | the run's runtime tree (a virtualenv), when it has one | read-only bind |
//! | `/skill` | the skill's code | read-only bind |
//! | `/etc` | passwd and group naming the run's user, hosts, nsswitch, the loader's cache | read-only bind of the bundle's generated folder |
//! | `/proc`, `/dev` | the runtime's own | proc; tmpfs with the standard devices |
//! | `/work`, `/tmp` | `HOME` and scratch | tmpfs, the spec's work-directory size, `nosuid,nodev` |
//! | `/out` | `$SKILLGATE_OUTPUT_DIR` | read-write bind of a size-capped tmpfs the host mounted (and reads after the run) |
//!
//! Namespaces: pid, mount, ipc, uts, cgroup and a new network namespace with loopback
//! only. The process: the spec's uid and gid, no capabilities, `noNewPrivileges`, the
//! `nofile`, `fsize` and `cpu` rlimits, the emitted seccomp profile. Cgroups: memory
//! (swap included), pids, and one CPU of quota. Under gVisor the sandbox's own host tasks
//! live in the container's cgroup too: its pids limit is raised by them
//! ([`BundlePlan::runtime_pids`]) and the skill's own limit is `RLIMIT_NPROC`, enforced by
//! gVisor's kernel.
use crate::run_dir::{OUT_DIR, RUNTIME_DIR, WORK_DIR};
use oci_spec::runtime::{LinuxSeccomp, Spec};
use serde_json::{Value, json};
use skillgate_core::{ExecError, SandboxSpec};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Where the skill's code is mounted (read-only) inside the container.
pub const SKILL_DIR: &str = "/skill";
/// The host's system directories the container sees (read-only).
pub const SYSTEM_DIRS: [&str; 7] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];
/// The container's own mount points, made in the shared root once.
const MOUNT_POINTS: [&str; 8] = [
    "etc", "proc", "dev", "tmp", "work", "out", "skill", "runtime",
];
/// The mount points of the writable tmpfs folders.
const WRITABLE: [&str; 2] = ["tmp", "work"];
/// The dynamic loader's cache, copied into the bundle's `/etc` (without it the loader
/// finds no library under `/lib/<triplet>`).
const LD_SO_CACHE: &str = "/etc/ld.so.cache";
/// The CPU quota of one run: one CPU (`quota / period`).
pub const CPU_PERIOD_US: u64 = 100_000;

/// Everything of one bundle that is not in the spec.
#[derive(Debug, Clone)]
pub struct BundlePlan<'a> {
    /// The shared read-only root ([`prepare_root`]).
    pub rootfs: &'a Path,
    /// The command: interpreter, its arguments, the entry script inside the container.
    pub args: Vec<String>,
    /// The host folder of the skill's code (bound read-only at [`SKILL_DIR`]).
    pub skill_dir: &'a Path,
    /// The host folder bound read-write at `/out` (a size-capped tmpfs).
    pub out_dir: &'a Path,
    /// The bundle's generated `/etc`.
    pub etc_dir: &'a Path,
    /// The runtime's tree, bound read-only at [`RUNTIME_DIR`].
    pub runtime_tree: Option<&'a Path>,
    /// Further host paths to bind read-only at their own path (the interpreter's prefix,
    /// the spec's read-only paths), when not inside [`SYSTEM_DIRS`].
    pub read_only: Vec<PathBuf>,
    /// The seccomp profile, emitted for this machine.
    pub seccomp: Option<LinuxSeccomp>,
    /// The container's cgroup path (relative to each controller's root).
    pub cgroup: String,
    /// Processes and threads of the runtime itself that count against the cgroup's pids
    /// limit (gVisor's sandbox runs inside the container's cgroup), added to it; the
    /// skill's own limit is then `RLIMIT_NPROC`, enforced by the sandbox's kernel.
    pub runtime_pids: Option<u32>,
}

/// `true` when `p` is shown by a bind of one of [`SYSTEM_DIRS`] (a directory, not a link).
pub fn covered_by_system_dirs(p: &Path) -> bool {
    SYSTEM_DIRS
        .iter()
        .any(|d| p.starts_with(d) && !Path::new(d).is_symlink())
}

fn bind_ro(source: &Path, target: &str, exec: bool) -> Value {
    let mut options = vec!["rbind", "ro", "nosuid", "nodev"];
    if !exec {
        options.push("noexec");
    }
    json!({"destination": target, "type": "bind", "source": source, "options": options})
}

fn tmpfs(target: &str, size: u64) -> Value {
    json!({
        "destination": target, "type": "tmpfs", "source": "tmpfs",
        "options": ["nosuid", "nodev", "mode=1777", format!("size={}", size.max(4096))]
    })
}

/// The bundle's `config.json` for `spec` (see the module documentation).
pub fn config(spec: &SandboxSpec, plan: &BundlePlan<'_>) -> Result<Spec, ExecError> {
    let limits = &spec.limits;
    let mut mounts = vec![
        json!({"destination": "/proc", "type": "proc", "source": "proc", "options": ["nosuid", "noexec", "nodev"]}),
        json!({"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]}),
    ];
    for dir in SYSTEM_DIRS {
        let p = Path::new(dir);
        if p.is_dir() && !p.is_symlink() {
            mounts.push(bind_ro(p, dir, true));
        }
    }
    mounts.push(bind_ro(plan.etc_dir, "/etc", false));
    if let Some(tree) = plan.runtime_tree {
        mounts.push(bind_ro(tree, RUNTIME_DIR, true));
    }
    for p in &plan.read_only {
        let target = p.to_str().ok_or_else(|| {
            ExecError::Other(format!("read-only path {} is not UTF-8", p.display()))
        })?;
        mounts.push(bind_ro(p, target, true));
    }
    mounts.push(bind_ro(plan.skill_dir, SKILL_DIR, false));
    mounts.push(tmpfs(WORK_DIR, limits.workdir_bytes));
    mounts.push(tmpfs("/tmp", limits.workdir_bytes));
    mounts.push(json!({
        "destination": OUT_DIR, "type": "bind", "source": plan.out_dir,
        "options": ["rbind", "rw", "nosuid", "nodev", "noexec"]
    }));
    let rlimit = |kind: &str, v: u64| json!({"type": kind, "hard": v, "soft": v});
    let mut rlimits = vec![
        rlimit("RLIMIT_NOFILE", u64::from(limits.open_files)),
        rlimit("RLIMIT_FSIZE", limits.file_size_bytes),
    ];
    let mut pids = i64::from(limits.pids);
    if let Some(extra) = plan.runtime_pids {
        pids += i64::from(extra);
        rlimits.push(rlimit("RLIMIT_NPROC", u64::from(limits.pids)));
    }
    if let Some(cpu) = limits.cpu_time {
        // RLIMIT_CPU counts whole seconds; round up so a limit is never tighter.
        let secs = cpu.as_secs() + u64::from(cpu.subsec_nanos() > 0);
        rlimits.push(rlimit("RLIMIT_CPU", secs.max(1)));
    }
    let memory = i64::try_from(limits.memory_bytes).unwrap_or(i64::MAX);
    let config = json!({
        "ociVersion": "1.0.2",
        "process": {
            "terminal": false,
            "user": {"uid": spec.uid, "gid": spec.gid},
            "args": plan.args,
            "env": crate::run_dir::container_env(spec),
            "cwd": WORK_DIR,
            "capabilities": {"bounding": [], "effective": [], "inheritable": [], "permitted": [], "ambient": []},
            "rlimits": rlimits,
            "noNewPrivileges": true
        },
        "root": {"path": plan.rootfs, "readonly": true},
        "hostname": "skillgate",
        "mounts": mounts,
        "linux": {
            "namespaces": [
                {"type": "pid"}, {"type": "network"}, {"type": "ipc"},
                {"type": "uts"}, {"type": "mount"}, {"type": "cgroup"}
            ],
            "cgroupsPath": plan.cgroup,
            "resources": {
                "devices": [{"allow": false, "access": "rwm"}],
                "memory": {"limit": memory, "swap": memory},
                "pids": {"limit": pids},
                "cpu": {"quota": CPU_PERIOD_US, "period": CPU_PERIOD_US}
            },
            "maskedPaths": [
                "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
                "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi"
            ],
            "readonlyPaths": [
                "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"
            ],
            "seccomp": plan.seccomp
        }
    });
    serde_json::from_value(config)
        .map_err(|e| ExecError::Other(format!("building the OCI bundle's config.json: {e}")))
}

/// Makes the shared read-only root at `root` (idempotent): the container's mount points,
/// and the host's top-level links among [`SYSTEM_DIRS`] (Debian's `/bin → usr/bin`)
/// recreated as links.
pub fn prepare_root(root: &Path) -> Result<(), ExecError> {
    let io = |what: &str, e| ExecError::io(format!("{what} in the OCI root {}", root.display()), e);
    std::fs::create_dir_all(root).map_err(|e| io("creating it", e))?;
    for name in MOUNT_POINTS {
        let inside = root.join(name);
        std::fs::create_dir_all(&inside).map_err(|e| io("creating a mount point", e))?;
        // runc gives a tmpfs the mode of the folder it is mounted on (its `mode=` option
        // is replaced): the writable ones must be open to the run's user, sticky.
        if WRITABLE.contains(&name) {
            std::fs::set_permissions(&inside, std::fs::Permissions::from_mode(0o1777))
                .map_err(|e| io("opening a mount point", e))?;
        }
    }
    for dir in SYSTEM_DIRS {
        let host = Path::new(dir);
        let inside = root.join(dir.trim_start_matches('/'));
        if inside.symlink_metadata().is_ok() {
            continue;
        }
        // Another executor sharing the state root may make the same entry meanwhile.
        let made = if let Ok(target) = std::fs::read_link(host) {
            std::os::unix::fs::symlink(target, &inside)
        } else if host.is_dir() {
            std::fs::create_dir(&inside)
        } else {
            Ok(())
        };
        match made {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                return Err(io("creating a mount point", e));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Writes the bundle's `/etc` into `etc`: passwd and group naming the run's user, hosts,
/// hostname, nsswitch, and a copy of the host's loader cache.
pub fn write_etc(etc: &Path, spec: &SandboxSpec) -> Result<(), ExecError> {
    let io = |e| ExecError::io(format!("writing the bundle's /etc at {}", etc.display()), e);
    let (u, g) = (spec.uid, spec.gid);
    std::fs::create_dir_all(etc).map_err(io)?;
    let files = [
        (
            "passwd",
            format!(
                "root:x:0:0:root:/:/usr/sbin/nologin\nskill:x:{u}:{g}:skill:{WORK_DIR}:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/:/usr/sbin/nologin\n"
            ),
        ),
        (
            "group",
            format!("root:x:0:\nskill:x:{g}:\nnogroup:x:65534:\n"),
        ),
        ("hosts", "127.0.0.1 localhost\n::1 localhost\n".to_string()),
        ("hostname", "skillgate\n".to_string()),
        (
            "nsswitch.conf",
            "passwd: files\ngroup: files\nhosts: files\n".to_string(),
        ),
    ];
    for (name, text) in files {
        std::fs::write(etc.join(name), text).map_err(io)?;
    }
    if Path::new(LD_SO_CACHE).is_file() {
        std::fs::copy(LD_SO_CACHE, etc.join("ld.so.cache")).map_err(io)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn plan<'a>(dir: &'a Path) -> BundlePlan<'a> {
        BundlePlan {
            rootfs: dir,
            args: vec!["/usr/bin/python3".into(), "/skill/main.py".into()],
            skill_dir: dir,
            out_dir: dir,
            etc_dir: dir,
            runtime_tree: Some(Path::new("/opt/rt")),
            read_only: vec!["/opt/data".into()],
            seccomp: None,
            cgroup: "/skillgate/r1".into(),
            runtime_pids: None,
        }
    }

    #[test]
    fn the_spec_becomes_the_bundles_limits_and_containment() {
        let mut spec = SandboxSpec::default();
        spec.limits.memory_bytes = 64 << 20;
        spec.limits.pids = 32;
        spec.limits.open_files = 100;
        spec.limits.cpu_time = Some(Duration::from_millis(1500));
        spec.uid = 1234;
        spec.gid = 1235;
        let dir = Path::new("/tmp/b");
        let cfg = config(&spec, &plan(dir)).unwrap();
        let v = serde_json::to_value(&cfg).unwrap();
        let p = &v["process"];
        assert_eq!(p["user"]["uid"], 1234);
        assert_eq!(p["user"]["gid"], 1235);
        assert_eq!(p["noNewPrivileges"], true);
        for set in [
            "bounding",
            "effective",
            "inheritable",
            "permitted",
            "ambient",
        ] {
            assert_eq!(p["capabilities"][set], json!([]), "{set}");
        }
        let rl = |k: &str| {
            p["rlimits"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["type"] == k)
                .map(|r| r["hard"].clone())
        };
        assert_eq!(rl("RLIMIT_NOFILE"), Some(json!(100)));
        assert_eq!(rl("RLIMIT_CPU"), Some(json!(2)), "CPU seconds round up");
        assert_eq!(rl("RLIMIT_FSIZE"), Some(json!(16 << 20)));
        assert_eq!(v["root"]["readonly"], true);
        let l = &v["linux"];
        let ns: Vec<&str> = l["namespaces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["type"].as_str().unwrap())
            .collect();
        for want in ["pid", "network", "mount", "ipc", "uts"] {
            assert!(ns.contains(&want), "{ns:?}");
        }
        // A new network namespace: none joined by path.
        assert!(
            l["namespaces"]
                .as_array()
                .unwrap()
                .iter()
                .all(|n| n.get("path").is_none())
        );
        assert_eq!(l["resources"]["memory"]["limit"], 64 << 20);
        assert_eq!(
            l["resources"]["memory"]["swap"],
            64 << 20,
            "no swap beyond it"
        );
        assert_eq!(l["resources"]["pids"]["limit"], 32);
        assert_eq!(l["cgroupsPath"], "/skillgate/r1");
        let mounts = v["mounts"].as_array().unwrap();
        let at = |d: &str| mounts.iter().find(|m| m["destination"] == d).cloned();
        let opts = |d: &str| at(d).unwrap()["options"].clone();
        assert!(opts(SKILL_DIR).as_array().unwrap().contains(&json!("ro")));
        assert!(opts("/runtime").as_array().unwrap().contains(&json!("ro")));
        assert!(opts("/opt/data").as_array().unwrap().contains(&json!("ro")));
        assert!(opts("/etc").as_array().unwrap().contains(&json!("ro")));
        assert!(opts("/usr").as_array().unwrap().contains(&json!("ro")));
        assert!(
            opts("/work")
                .as_array()
                .unwrap()
                .contains(&json!("size=67108864"))
        );
        assert_eq!(at("/work").unwrap()["type"], "tmpfs");
        assert_eq!(at("/out").unwrap()["type"], "bind");
        assert!(opts("/out").as_array().unwrap().contains(&json!("rw")));
        let env = p["env"].as_array().unwrap();
        assert!(env.contains(&json!("HOME=/work")));
    }

    #[test]
    fn under_gvisor_the_skills_pids_limit_is_nproc_and_the_cgroup_holds_the_sandbox_too() {
        let mut spec = SandboxSpec::default();
        spec.limits.pids = 16;
        let dir = Path::new("/tmp/b");
        let nproc = |v: &Value| {
            v["process"]["rlimits"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["type"] == "RLIMIT_NPROC")
                .map(|r| r["hard"].clone())
        };
        let runc = serde_json::to_value(config(&spec, &plan(dir)).unwrap()).unwrap();
        assert_eq!(runc["linux"]["resources"]["pids"]["limit"], 16);
        assert_eq!(
            nproc(&runc),
            None,
            "nproc counts the uid host-wide: never under runc"
        );
        let mut gvisor = plan(dir);
        gvisor.runtime_pids = Some(100);
        let gvisor = serde_json::to_value(config(&spec, &gvisor).unwrap()).unwrap();
        assert_eq!(gvisor["linux"]["resources"]["pids"]["limit"], 116);
        assert_eq!(nproc(&gvisor), Some(json!(16)));
    }

    #[test]
    fn the_emitted_seccomp_profile_goes_into_the_bundle() {
        let profile = skillgate_confine::preset("python").unwrap();
        let arch = skillgate_confine::Arch::native().unwrap();
        let seccomp = skillgate_confine::oci::to_oci(&profile, &[arch]).unwrap();
        let dir = Path::new("/tmp/b");
        let mut plan = plan(dir);
        plan.seccomp = Some(seccomp.clone());
        let cfg = config(&SandboxSpec::default(), &plan).unwrap();
        assert_eq!(
            cfg.linux().as_ref().unwrap().seccomp().as_ref(),
            Some(&seccomp)
        );
    }

    #[test]
    fn the_root_keeps_the_hosts_top_level_links() {
        let dir = tempfile::tempdir().unwrap();
        prepare_root(dir.path()).unwrap();
        prepare_root(dir.path()).unwrap();
        for d in MOUNT_POINTS {
            assert!(dir.path().join(d).is_dir(), "{d}");
        }
        for d in ["tmp", "work"] {
            let mode = std::fs::metadata(dir.path().join(d))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o7777, 0o1777, "{d}");
        }
        for d in SYSTEM_DIRS {
            let host = Path::new(d);
            let inside = dir.path().join(d.trim_start_matches('/'));
            if host.is_symlink() {
                assert_eq!(
                    std::fs::read_link(&inside).unwrap(),
                    std::fs::read_link(host).unwrap()
                );
            } else if host.is_dir() {
                assert!(inside.is_dir(), "{d}");
            }
        }
    }
}
