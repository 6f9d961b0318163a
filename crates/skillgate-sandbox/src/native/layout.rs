//! The sandbox's file system layout, turned into a [`Plan`] before the fork.
//!
//! | path | what | how |
//! |------|------|-----|
//! | `/usr`, `/bin`, `/sbin`, `/lib*` | the host's system directories | read-only binds (symlinks kept as symlinks) |
//! | interpreter prefix, extra paths | e.g. a pyenv prefix under `/root`, a virtualenv | read-only binds of exactly that path (none beneath the sandbox's own mounts) |
//! | `/runtime` | the run's runtime tree (`skillgate runtime install`), wherever it is installed | read-only bind; its interpreter runs from there |
//! | `/etc` | passwd and group with the sandbox user, hosts, the ld.so cache, `localtime` (UTC), and the shared-library links of `/etc/alternatives` | read-only tmpfs with generated files and links |
//! | `/dev` | null, zero, full, random, urandom, and the `fd` links | tmpfs, read-only, with device binds |
//! | `/proc` | a fresh proc of the sandbox's pid namespace; `/proc/sys` read-only | proc |
//! | `/tmp` | private | tmpfs, size-capped, noexec |
//! | `/work` | the skill's files; the working directory and `HOME` | tmpfs, size-capped, noexec, owned by the sandbox user |
//! | `/out` | `$SKILLGATE_OUTPUT_DIR`, collected after exit | tmpfs, size-capped, noexec, owned by the sandbox user |
//! | `/workspace` | a session's workspace (`SandboxSpec::workspace`), only when given; then the working directory | writable bind of the host directory, nosuid, nodev, noexec; its tree owned by the sandbox user |
//!
//! The root itself is a small read-only tmpfs: nothing else of the host is visible.
//! Landlock rules mirror this table.
#![allow(unsafe_code)]

use super::plan::{ChildFds, LandlockPlan, LandlockRule, Op, Plan, SeccompPlan, cstr, ptr_array};
use crate::{Interpreter, rlimits::RlimitSet};
use skillgate_core::{ExecError, SandboxSpec, Skill, WORKSPACE_DIR};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::CString;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Component, Path, PathBuf};

/// The working directory (and `HOME`) inside the sandbox.
pub(crate) const WORK_DIR: &str = "/work";
/// The output directory inside the sandbox (`$SKILLGATE_OUTPUT_DIR`).
pub(crate) const OUT_DIR: &str = "/out";
/// Where a runtime's tree (a virtualenv) is mounted, wherever it lives on the host (a
/// virtualenv finds itself from the path its interpreter is started by).
pub(crate) const RUNTIME_DIR: &str = "/runtime";
/// The sandbox's own mount points: a host path beneath one would be hidden by it.
const OWN_MOUNTS: [&str; 8] = [
    "/etc",
    "/dev",
    "/proc",
    "/tmp",
    WORK_DIR,
    OUT_DIR,
    RUNTIME_DIR,
    WORKSPACE_DIR,
];
/// The host's system directories made visible.
const SYSTEM_DIRS: [&str; 7] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];
/// The dynamic loader's cache, copied into the sandbox's `/etc`.
const LD_SO_CACHE: &str = "/etc/ld.so.cache";
/// Folders of `/etc` whose links to shared libraries are recreated in the sandbox's `/etc`
/// (Debian reaches `libblas.so.3` through `/etc/alternatives`).
const ETC_LINK_DIRS: [&str; 1] = ["/etc/alternatives"];
/// The time zone every run sees.
const LOCALTIME: &str = "/usr/share/zoneinfo/Etc/UTC";
/// Devices bound into `/dev`.
const DEVICES: [&str; 5] = ["null", "zero", "full", "random", "urandom"];

// Landlock filesystem access rights (linux/landlock.h).
const LL_EXECUTE: u64 = 1 << 0;
const LL_WRITE_FILE: u64 = 1 << 1;
const LL_READ_FILE: u64 = 1 << 2;
const LL_READ_DIR: u64 = 1 << 3;
const LL_TRUNCATE: u64 = 1 << 14;
/// The landlock scope (ABI 6) that keeps signals inside the skill's domain.
const LANDLOCK_SCOPE_SIGNAL: u64 = 1 << 1;

/// The landlock ABI version of this kernel, if it has landlock enabled.
pub(crate) fn landlock_abi() -> Option<u32> {
    const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
    // SAFETY: with a null attribute, size 0 and the VERSION flag the call only returns a
    // number; it reads and writes no memory.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(v).ok().filter(|v| *v > 0)
}

/// Every filesystem right an ABI version knows.
fn handled(abi: u32) -> u64 {
    let bits = match abi {
        1 => 13,
        2 => 14,
        3 | 4 => 15,
        _ => 16,
    };
    (1u64 << bits) - 1
}

/// What [`build`] needs.
pub(crate) struct Inputs<'a> {
    pub(crate) skill: &'a Skill,
    pub(crate) interp: &'a Interpreter,
    pub(crate) spec: &'a SandboxSpec,
    pub(crate) env: &'a BTreeMap<String, String>,
    pub(crate) host_uid: u32,
    pub(crate) host_gid: u32,
    pub(crate) landlock_abi: Option<u32>,
    pub(crate) cap_last_cap: u32,
    pub(crate) seccomp: Option<Vec<Vec<libc::sock_filter>>>,
    pub(crate) fds: ChildFds,
}

struct Builder {
    root: PathBuf,
    ops: Vec<Op>,
    made: BTreeSet<PathBuf>,
    ro_rules: Vec<(PathBuf, bool)>,
}

impl Builder {
    fn host(&self, inside: &Path) -> PathBuf {
        self.root.join(inside.strip_prefix("/").unwrap_or(inside))
    }

    fn mkdir_p(&mut self, inside: &Path) -> Result<(), ExecError> {
        let mut cur = PathBuf::from("/");
        for c in inside.components().skip(1) {
            cur.push(c);
            if self.made.insert(cur.clone()) {
                self.ops.push(Op::Mkdir {
                    path: cstr(self.host(&cur))?,
                    mode: 0o755,
                });
            }
        }
        Ok(())
    }

    fn tmpfs(&mut self, inside: &str, data: String, flags: u64) -> Result<(), ExecError> {
        self.mkdir_p(Path::new(inside))?;
        self.ops.push(Op::Tmpfs {
            dst: cstr(self.host(Path::new(inside)))?,
            data: cstr(data)?,
            flags,
        });
        Ok(())
    }

    /// A read-only bind of host `src` at the same path inside.
    fn bind_ro(&mut self, src: &Path) -> Result<(), ExecError> {
        self.bind_ro_at(src, src)
    }

    /// A read-only bind of host `src` at `inside`.
    fn bind_ro_at(&mut self, src: &Path, inside: &Path) -> Result<(), ExecError> {
        let is_dir = src.is_dir();
        if is_dir {
            self.mkdir_p(inside)?;
        } else {
            if let Some(parent) = inside.parent() {
                self.mkdir_p(parent)?;
            }
            self.ops.push(Op::Touch {
                path: cstr(self.host(inside))?,
            });
        }
        self.ops.push(Op::Bind {
            src: cstr(src)?,
            dst: cstr(self.host(inside))?,
            ro_flags: Some(libc::MS_NOSUID | libc::MS_NODEV),
        });
        self.ro_rules.push((inside.to_path_buf(), is_dir));
        Ok(())
    }
}

/// A workspace's host directory (absolute, an existing directory, not `/`) and its
/// working directory (relative, staying inside).
fn checked_workspace(ws: &skillgate_core::Workspace) -> Result<(PathBuf, PathBuf), ExecError> {
    let host = std::fs::canonicalize(&ws.host).map_err(|e| {
        ExecError::Other(format!(
            "workspace `{}` cannot be used: {e}",
            ws.host.display()
        ))
    })?;
    if !ws.host.is_absolute() || !host.is_dir() || host == Path::new("/") {
        return Err(ExecError::Other(format!(
            "workspace `{}` must be an absolute directory other than `/`",
            ws.host.display()
        )));
    }
    let cwd = if ws.cwd.is_empty() {
        PathBuf::new()
    } else {
        crate::workdir::safe_relative(&ws.cwd).ok_or_else(|| {
            ExecError::Other(format!(
                "workspace directory `{}` must be relative and stay inside the workspace",
                ws.cwd
            ))
        })?
    };
    Ok((host, cwd))
}

/// A host path given for a read-only mount: absolute, existing, canonical, not `/`.
fn checked_ro_path(p: &Path) -> Result<PathBuf, ExecError> {
    if !p.is_absolute() {
        return Err(ExecError::Other(format!(
            "read-only path `{}` must be absolute",
            p.display()
        )));
    }
    let c = std::fs::canonicalize(p).map_err(|e| {
        ExecError::Other(format!(
            "read-only path `{}` cannot be used: {e}",
            p.display()
        ))
    })?;
    if c == Path::new("/") {
        return Err(ExecError::Other(
            "read-only path `/` would expose the whole host".into(),
        ));
    }
    if let Some(own) = OWN_MOUNTS.iter().find(|m| c.starts_with(m)) {
        return Err(ExecError::Other(format!(
            "read-only path `{}` is under `{own}`, which the sandbox mounts itself; move it \
             elsewhere",
            c.display()
        )));
    }
    Ok(c)
}

fn covered_by_system_dirs(p: &Path) -> bool {
    SYSTEM_DIRS
        .iter()
        .any(|d| p.starts_with(d) && !Path::new(d).is_symlink())
}

/// The sandbox's generated `/etc` files: (name, contents).
fn etc_files(spec: &SandboxSpec) -> [(&'static str, String); 5] {
    let (u, g) = (spec.uid, spec.gid);
    [
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
    ]
}

/// The links of [`ETC_LINK_DIRS`] that lead to a shared library (`*.so*`) inside the
/// system directories, as (link inside `/etc`, the library's real path). The sandbox
/// recreates exactly these links, pointing straight at the library, which the system
/// directories' binds already show: the host's `/etc` itself is never visible. A link
/// leading anywhere else is left out (a library outside the system directories is made
/// visible by a runtime's `read_only` paths).
fn etc_library_links() -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for dir in ETC_LINK_DIRS {
        let Ok(rd) = std::fs::read_dir(dir) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name();
            if !name.to_string_lossy().contains(".so") {
                continue;
            }
            let link = Path::new(dir).join(&name);
            let Ok(target) = std::fs::canonicalize(&link) else {
                continue;
            };
            if target.is_file() && covered_by_system_dirs(&target) {
                out.push((link, target));
            }
        }
    }
    out.sort();
    out
}

/// Where every run mounts its new root: an empty directory owned by this (root) user and
/// writable by nobody else, created once (`/run/skillgate/root`, or under the temporary
/// directory when `/run` cannot hold it). Each run mounts its root there inside its own private mount
/// namespace, so runs never see each other's, and nothing of a run is written on the host.
pub(crate) fn root_mount_point() -> Result<&'static Path, ExecError> {
    static POINT: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    POINT
        .get_or_init(|| {
            let mut why = Vec::new();
            for base in [
                PathBuf::from("/run/skillgate"),
                std::env::temp_dir().join("skillgate"),
            ] {
                match private_dir(&base) {
                    Ok(point) => return Ok(point),
                    Err(e) => why.push(e),
                }
            }
            Err(why.join("; "))
        })
        .as_ref()
        .map(PathBuf::as_path)
        .map_err(|why| {
            ExecError::HostUnsupported(format!("the sandbox's root mount point is unusable: {why}"))
        })
}

/// Creates `base/root` (mode 0700) unless it exists, and checks both are trusted.
fn private_dir(base: &Path) -> Result<PathBuf, String> {
    let point = base.join("root");
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&point)
        .map_err(|e| format!("creating {}: {e}", point.display()))?;
    trusted_dir(base)?;
    trusted_dir(&point)?;
    Ok(point)
}

/// A real directory (not a link) owned by this user that nobody else can write to.
fn trusted_dir(d: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(d).map_err(|e| format!("{}: {e}", d.display()))?;
    let me = rustix::process::geteuid().as_raw();
    if !m.is_dir() || m.uid() != me || m.mode() & 0o022 != 0 {
        return Err(format!(
            "{} must be a directory owned by uid {me} and not writable by others; remove it \
             and let skillgate create it",
            d.display()
        ));
    }
    Ok(())
}

/// Adds the ops writing `bytes` to `base/rel`, creating its parent folders first (each
/// once: `made` remembers them).
fn write_beneath(
    ops: &mut Vec<Op>,
    made: &mut BTreeSet<PathBuf>,
    base: &Path,
    rel: &Path,
    bytes: std::sync::Arc<[u8]>,
) -> Result<(), ExecError> {
    let mut parent = PathBuf::new();
    for c in rel.parent().into_iter().flat_map(Path::components) {
        if let Component::Normal(n) = c {
            parent.push(n);
            if made.insert(parent.clone()) {
                ops.push(Op::Mkdir {
                    path: cstr(base.join(&parent))?,
                    mode: 0o755,
                });
            }
        }
    }
    ops.push(Op::Write {
        dst: cstr(base.join(rel))?,
        bytes,
        mode: 0o644,
    });
    Ok(())
}

/// Builds the plan.
pub(crate) fn build(i: &Inputs<'_>) -> Result<Plan, ExecError> {
    let entry_rel = crate::workdir::safe_relative(&i.skill.entry).ok_or_else(|| {
        ExecError::Other(format!(
            "entry path `{}` must be relative and stay inside the skill folder",
            i.skill.entry
        ))
    })?;
    let root = root_mount_point()?.to_path_buf();
    let mut b = Builder {
        root: root.clone(),
        ops: Vec::new(),
        made: BTreeSet::new(),
        ro_rules: Vec::new(),
    };
    let nosuid_nodev = libc::MS_NOSUID | libc::MS_NODEV;
    b.ops.push(Op::Tmpfs {
        dst: cstr(&root)?,
        data: cstr("size=1m,mode=0755")?,
        flags: nosuid_nodev,
    });
    for d in SYSTEM_DIRS {
        let p = Path::new(d);
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(p)
                    .map_err(|e| ExecError::io(format!("reading the link {d}"), e))?;
                b.ops.push(Op::Symlink {
                    target: cstr(target)?,
                    link: cstr(b.host(p))?,
                });
            }
            Ok(m) if m.is_dir() => b.bind_ro(p)?,
            _ => {}
        }
    }
    // A runtime's tree at its fixed place; its interpreter is run from there.
    let mut program = i.interp.program.clone();
    if let Some(rt) = &i.spec.interpreter
        && let Some(tree) = &rt.tree
    {
        let tree = std::fs::canonicalize(tree).map_err(|e| {
            ExecError::io(format!("runtime `{}` at {}", rt.runtime, tree.display()), e)
        })?;
        let rel = rt.program.strip_prefix(&tree).map_err(|_| {
            ExecError::Other(format!(
                "runtime `{}`: its interpreter {} is not inside its tree {}",
                rt.runtime,
                rt.program.display(),
                tree.display()
            ))
        })?;
        program = Path::new(RUNTIME_DIR).join(rel);
        b.bind_ro_at(&tree, Path::new(RUNTIME_DIR))?;
    }
    let mut extra = vec![i.interp.prefix.clone()];
    extra.extend(i.spec.read_only_paths.iter().cloned());
    for p in extra {
        let c = checked_ro_path(&p)?;
        if !covered_by_system_dirs(&c) {
            b.bind_ro(&c)?;
        }
    }
    // /etc: a tmpfs with the generated files and a copy of the loader's cache.
    b.tmpfs(
        "/etc",
        "size=4m,mode=0755".into(),
        nosuid_nodev | libc::MS_NOEXEC,
    )?;
    let etc_host = b.host(Path::new("/etc"));
    for (name, text) in etc_files(i.spec) {
        b.ops.push(Op::Write {
            dst: cstr(etc_host.join(name))?,
            bytes: text.into_bytes().into(),
            mode: 0o644,
        });
    }
    // The dynamic loader's cache makes library lookups fast; it holds no secrets.
    if Path::new(LD_SO_CACHE).is_file() {
        b.ops.push(Op::Copy {
            src: cstr(LD_SO_CACHE)?,
            dst: cstr(etc_host.join("ld.so.cache"))?,
            mode: 0o644,
        });
    }
    for (link, target) in etc_library_links() {
        if let Some(parent) = link.parent() {
            b.mkdir_p(parent)?;
        }
        b.ops.push(Op::Symlink {
            target: cstr(target)?,
            link: cstr(b.host(&link))?,
        });
    }
    if Path::new(LOCALTIME).is_file() {
        b.ops.push(Op::Symlink {
            target: cstr(LOCALTIME)?,
            link: cstr(etc_host.join("localtime"))?,
        });
    }
    b.ops.push(Op::Remount {
        dst: cstr(&etc_host)?,
        flags: libc::MS_RDONLY | nosuid_nodev | libc::MS_NOEXEC,
    });
    b.ro_rules.push((PathBuf::from("/etc"), true));

    // /dev: a tmpfs with bound device nodes (creating nodes is not allowed, binding is).
    b.tmpfs(
        "/dev",
        "size=64k,mode=0755".into(),
        libc::MS_NOSUID | libc::MS_NOEXEC,
    )?;
    for d in DEVICES {
        let host = Path::new("/dev").join(d);
        b.ops.push(Op::Touch {
            path: cstr(b.host(&host))?,
        });
        b.ops.push(Op::Bind {
            src: cstr(&host)?,
            dst: cstr(b.host(&host))?,
            ro_flags: None,
        });
    }
    for (name, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        b.ops.push(Op::Symlink {
            target: cstr(target)?,
            link: cstr(b.host(&Path::new("/dev").join(name)))?,
        });
    }
    b.ops.push(Op::Remount {
        dst: cstr(b.host(Path::new("/dev")))?,
        flags: libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NOEXEC,
    });

    b.mkdir_p(Path::new("/proc"))?;
    let proc_host = b.host(Path::new("/proc"));
    b.ops.push(Op::Proc {
        dst: cstr(&proc_host)?,
        sys: cstr(proc_host.join("sys"))?,
        ro_flags: nosuid_nodev | libc::MS_NOEXEC,
    });

    let cap = i.spec.limits.workdir_bytes.max(4096);
    let private = nosuid_nodev | libc::MS_NOEXEC;
    b.tmpfs("/tmp", format!("size={cap},mode=1777"), private)?;
    let owned = format!("size={cap},mode=0755,uid={},gid={}", i.host_uid, i.host_gid);
    b.tmpfs(WORK_DIR, owned.clone(), private)?;
    b.tmpfs(OUT_DIR, owned, private)?;
    let cwd = match &i.spec.workspace {
        Some(ws) => {
            let (host, cwd) = checked_workspace(ws)?;
            let inside = Path::new(WORKSPACE_DIR);
            b.mkdir_p(inside)?;
            let dst = cstr(b.host(inside))?;
            b.ops.push(Op::Bind {
                src: cstr(&host)?,
                dst: dst.clone(),
                ro_flags: None,
            });
            // Writable, never executable.
            b.ops.push(Op::Remount {
                dst,
                flags: libc::MS_BIND | private,
            });
            inside.join(cwd)
        }
        None => PathBuf::from(WORK_DIR),
    };

    // The skill's files, from the bytes read and checked when it was loaded (never from
    // the host's folder, which may have changed since): the folder's other files first,
    // then the entry (the scanned code, which wins over a file of the same name).
    let work_host = b.host(Path::new(WORK_DIR));
    let mut made = BTreeSet::new();
    for f in i.skill.files.iter() {
        let rel = crate::workdir::safe_relative(&f.path).ok_or_else(|| {
            ExecError::Other(format!(
                "skill file `{}` must be relative and stay inside the skill folder",
                f.path
            ))
        })?;
        write_beneath(&mut b.ops, &mut made, &work_host, &rel, f.bytes.clone())?;
    }
    write_beneath(
        &mut b.ops,
        &mut made,
        &work_host,
        &entry_rel,
        i.skill.code.clone(),
    )?;
    // Nothing can be created in the root itself.
    b.ops.push(Op::Remount {
        dst: cstr(&root)?,
        flags: libc::MS_RDONLY | nosuid_nodev,
    });

    let landlock = i.landlock_abi.map(|abi| {
        let all = handled(abi);
        let trunc = if abi >= 3 { LL_TRUNCATE } else { 0 };
        let read_dir = LL_EXECUTE | LL_READ_FILE | LL_READ_DIR;
        let read_file = LL_EXECUTE | LL_READ_FILE;
        let mut rules: Vec<(PathBuf, u64)> = b
            .ro_rules
            .iter()
            .map(|(p, is_dir)| (p.clone(), if *is_dir { read_dir } else { read_file }))
            .collect();
        rules.push(("/proc".into(), LL_READ_FILE | LL_READ_DIR));
        rules.push((
            "/dev".into(),
            LL_READ_FILE | LL_READ_DIR | LL_WRITE_FILE | trunc,
        ));
        // Writable places: everything but executing.
        for d in ["/tmp", WORK_DIR, OUT_DIR] {
            rules.push((d.into(), all & !LL_EXECUTE));
        }
        if i.spec.workspace.is_some() {
            rules.push((WORKSPACE_DIR.into(), all & !LL_EXECUTE));
        }
        (all, rules)
    });
    let landlock = match landlock {
        Some((handled, rules)) => Some(LandlockPlan {
            handled,
            scoped: if i.landlock_abi >= Some(6) {
                LANDLOCK_SCOPE_SIGNAL
            } else {
                0
            },
            rules: rules
                .into_iter()
                .map(|(p, access)| {
                    Ok(LandlockRule {
                        path: cstr(p)?,
                        access,
                    })
                })
                .collect::<Result<_, ExecError>>()?,
        }),
        None => None,
    };

    let entry_inside = Path::new(WORK_DIR).join(&entry_rel);
    let argv = std::iter::once(cstr(&program))
        .chain(i.interp.isolation_args().iter().map(cstr))
        .chain(std::iter::once(cstr(&entry_inside)))
        .collect::<Result<Vec<_>, _>>()?;
    let envp = i
        .env
        .iter()
        .map(|(k, v)| cstr(format!("{k}={v}")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Plan {
        new_root: cstr(&root)?,
        ops: b.ops,
        hostname: CString::from(c"skillgate"),
        uid: i.spec.uid,
        gid: i.spec.gid,
        cap_last_cap: i.cap_last_cap,
        cwd: cstr(&cwd)?,
        program: cstr(&program)?,
        argv_ptrs: ptr_array(&argv),
        envp_ptrs: ptr_array(&envp),
        _argv: argv,
        _envp: envp,
        rlimits: RlimitSet::from_limits(&i.spec.limits),
        landlock,
        seccomp: i.seccomp.clone().map(|filters| SeccompPlan { filters }),
        fds: i.fds,
        cgroup_join: Vec::new(),
        skill_cgroup_join: None,
        deadline: libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        },
        host_args: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_mount_point_must_be_private_to_this_user() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let ok = t.path().join("ok");
        std::fs::create_dir(&ok).unwrap();
        std::fs::set_permissions(&ok, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(trusted_dir(&ok), Ok(()));
        let open = t.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let why = trusted_dir(&open).unwrap_err();
        assert!(why.contains("not writable by others"), "{why}");
        let link = t.path().join("link");
        std::os::unix::fs::symlink(&ok, &link).unwrap();
        assert!(trusted_dir(&link).is_err());
        assert!(trusted_dir(&t.path().join("missing")).is_err());
        let point = root_mount_point().unwrap();
        assert_eq!(trusted_dir(point), Ok(()));
        // A fresh base is created private; one that others can write to is refused.
        let made = private_dir(&t.path().join("fresh")).unwrap();
        assert_eq!(made, t.path().join("fresh/root"));
        assert_eq!(trusted_dir(&made), Ok(()));
        let why = private_dir(&open).unwrap_err();
        assert!(why.contains("not writable by others"), "{why}");
    }

    #[test]
    fn only_library_links_inside_the_system_dirs_are_recreated() {
        for (link, target) in etc_library_links() {
            assert!(link.starts_with("/etc/"), "{}", link.display());
            assert!(link.to_string_lossy().contains(".so"), "{}", link.display());
            assert!(covered_by_system_dirs(&target) && target.is_file());
        }
        // Debian's BLAS, when installed, is among them.
        let blas = Path::new("/etc/alternatives/libblas.so.3-x86_64-linux-gnu");
        if blas.exists() {
            assert!(etc_library_links().iter().any(|(l, _)| l == blas));
        }
    }

    #[test]
    fn handled_rights_grow_with_the_abi() {
        assert_eq!(handled(1), 0x1fff);
        assert_eq!(handled(3), 0x7fff);
        assert!(handled(6) & LL_TRUNCATE != 0);
    }

    #[test]
    fn read_only_paths_must_be_absolute_existing_and_not_root() {
        assert!(checked_ro_path(Path::new("relative")).is_err());
        assert!(checked_ro_path(Path::new("/no/such/path/here")).is_err());
        assert!(checked_ro_path(Path::new("/")).is_err());
        assert!(checked_ro_path(Path::new("/usr")).is_ok());
        // Beneath the sandbox's own mounts it would be hidden: a clear error instead.
        let err = checked_ro_path(Path::new("/proc/self"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("under `/proc`"), "{err}");
    }
}
