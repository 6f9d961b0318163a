//! The sandbox's file system layout, turned into a [`Plan`] before the fork.
//!
//! | path | what | how |
//! |------|------|-----|
//! | `/usr`, `/bin`, `/sbin`, `/lib*` | the host's system directories | read-only binds (symlinks kept as symlinks) |
//! | interpreter prefix, extra paths | e.g. a pyenv prefix under `/root`, a virtualenv | read-only binds of exactly that path |
//! | `/etc` | passwd and group with the sandbox user, hosts, the ld.so cache | read-only tmpfs with generated files |
//! | `/dev` | null, zero, full, random, urandom, and the `fd` links | tmpfs, read-only, with device binds |
//! | `/proc` | a fresh proc of the sandbox's pid namespace; `/proc/sys` read-only | proc |
//! | `/tmp` | private | tmpfs, size-capped, noexec |
//! | `/work` | the skill's files; the working directory and `HOME` | tmpfs, size-capped, noexec, owned by the sandbox user |
//! | `/out` | `$SKILLGATE_OUTPUT_DIR`, collected after exit | tmpfs, size-capped, noexec, owned by the sandbox user |
//!
//! The root itself is a small read-only tmpfs: nothing else of the host is visible.
//! Landlock rules mirror this table.
#![allow(unsafe_code)]

use super::plan::{ChildFds, LandlockPlan, LandlockRule, Op, Plan, SeccompPlan, cstr, ptr_array};
use crate::workdir::WorkDir;
use crate::{Interpreter, rlimits::RlimitSet};
use skillgate_core::{ExecError, SandboxSpec, Skill};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::CString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

/// The working directory (and `HOME`) inside the sandbox.
pub(crate) const WORK_DIR: &str = "/work";
/// The output directory inside the sandbox (`$SKILLGATE_OUTPUT_DIR`).
pub(crate) const OUT_DIR: &str = "/out";
/// Most files copied from a skill folder.
const MAX_SKILL_FILES: usize = 1000;
/// The host's system directories made visible.
const SYSTEM_DIRS: [&str; 7] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];
/// Devices bound into `/dev`.
const DEVICES: [&str; 5] = ["null", "zero", "full", "random", "urandom"];

// Landlock filesystem access rights (linux/landlock.h).
const LL_EXECUTE: u64 = 1 << 0;
const LL_WRITE_FILE: u64 = 1 << 1;
const LL_READ_FILE: u64 = 1 << 2;
const LL_READ_DIR: u64 = 1 << 3;
const LL_TRUNCATE: u64 = 1 << 14;

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
    pub(crate) dir: &'a WorkDir,
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
        let is_dir = src.is_dir();
        if is_dir {
            self.mkdir_p(src)?;
        } else {
            if let Some(parent) = src.parent() {
                self.mkdir_p(parent)?;
            }
            self.ops.push(Op::Touch {
                path: cstr(self.host(src))?,
            });
        }
        self.ops.push(Op::Bind {
            src: cstr(src)?,
            dst: cstr(self.host(src))?,
            ro_flags: Some(libc::MS_NOSUID | libc::MS_NODEV),
        });
        self.ro_rules.push((src.to_path_buf(), is_dir));
        Ok(())
    }
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
    Ok(c)
}

fn covered_by_system_dirs(p: &Path) -> bool {
    SYSTEM_DIRS
        .iter()
        .any(|d| p.starts_with(d) && !Path::new(d).is_symlink())
}

/// Writes the sandbox's `/etc` into the staging directory.
fn write_etc(etc: &Path, spec: &SandboxSpec) -> Result<(), ExecError> {
    let io = |e| ExecError::io(format!("writing {}", etc.display()), e);
    std::fs::create_dir_all(etc).map_err(io)?;
    let (u, g) = (spec.uid, spec.gid);
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
    // The dynamic loader's cache makes library lookups fast; it holds no secrets.
    if Path::new("/etc/ld.so.cache").is_file() {
        std::fs::copy("/etc/ld.so.cache", etc.join("ld.so.cache")).map_err(io)?;
    }
    Ok(())
}

/// The skill folder's regular files (symlinks skipped), as paths relative to it.
fn skill_files(src: &Path, entry: &Path) -> Result<Vec<(PathBuf, bool)>, ExecError> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = src.join(&rel);
        let rd = std::fs::read_dir(&dir)
            .map_err(|e| ExecError::io(format!("reading skill folder {}", dir.display()), e))?;
        let mut entries: Vec<_> = rd.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let r = rel.join(e.file_name());
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                out.push((r.clone(), true));
                stack.push(r);
            } else if ft.is_file() && r != entry {
                out.push((r, false));
            }
            if out.len() > MAX_SKILL_FILES {
                return Err(ExecError::Other(format!(
                    "skill folder {} has more than {MAX_SKILL_FILES} files",
                    src.display()
                )));
            }
        }
    }
    Ok(out)
}

/// Builds the plan.
pub(crate) fn build(i: &Inputs<'_>) -> Result<Plan, ExecError> {
    let staging = i.dir.root();
    let io = |what: &str, e| ExecError::io(format!("{what} in {}", staging.display()), e);
    // The init builds the root as host root; nobody else needs to enter the staging area.
    let root = staging.join("root");
    std::fs::create_dir(&root).map_err(|e| io("creating the root mount point", e))?;
    let etc = staging.join("etc");
    write_etc(&etc, i.spec)?;

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
                let target = std::fs::read_link(p).map_err(|e| io("reading a link", e))?;
                b.ops.push(Op::Symlink {
                    target: cstr(target)?,
                    link: cstr(b.host(p))?,
                });
            }
            Ok(m) if m.is_dir() => b.bind_ro(p)?,
            _ => {}
        }
    }
    let mut extra = vec![i.interp.prefix.clone()];
    extra.extend(i.spec.read_only_paths.iter().cloned());
    for p in extra {
        let c = checked_ro_path(&p)?;
        if !covered_by_system_dirs(&c) {
            b.bind_ro(&c)?;
        }
    }
    // /etc: a tmpfs with copies of the generated files, so the staging directory can go
    // as soon as the root is built.
    b.tmpfs(
        "/etc",
        "size=4m,mode=0755".into(),
        nosuid_nodev | libc::MS_NOEXEC,
    )?;
    let etc_host = b.host(Path::new("/etc"));
    let mut staged: Vec<_> = std::fs::read_dir(&etc)
        .map_err(|e| io("listing the generated /etc", e))?
        .flatten()
        .map(|e| e.file_name())
        .collect();
    staged.sort();
    for name in staged {
        b.ops.push(Op::Copy {
            src: cstr(etc.join(&name))?,
            dst: cstr(etc_host.join(&name))?,
            mode: 0o644,
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
    });
    b.ops.push(Op::Bind {
        src: cstr(proc_host.join("sys"))?,
        dst: cstr(proc_host.join("sys"))?,
        ro_flags: Some(nosuid_nodev | libc::MS_NOEXEC),
    });

    let cap = i.spec.limits.workdir_bytes.max(4096);
    let private = nosuid_nodev | libc::MS_NOEXEC;
    b.tmpfs("/tmp", format!("size={cap},mode=1777"), private)?;
    let owned = format!("size={cap},mode=0755,uid={},gid={}", i.host_uid, i.host_gid);
    b.tmpfs(WORK_DIR, owned.clone(), private)?;
    b.tmpfs(OUT_DIR, owned, private)?;

    // The skill's files: the folder's other files first, then the entry (the scanned
    // code, which wins over a file of the same name).
    let entry_rel = i
        .dir
        .entry()
        .strip_prefix(i.dir.work())
        .map_err(|_| ExecError::Other("entry outside the work directory".into()))?
        .to_path_buf();
    let work_host = b.host(Path::new(WORK_DIR));
    if let Some(src) = &i.skill.source_dir {
        for (rel, is_dir) in skill_files(src, &entry_rel)? {
            if is_dir {
                b.ops.push(Op::Mkdir {
                    path: cstr(work_host.join(&rel))?,
                    mode: 0o755,
                });
            } else {
                b.ops.push(Op::Copy {
                    src: cstr(src.join(&rel))?,
                    dst: cstr(work_host.join(&rel))?,
                    mode: 0o644,
                });
            }
        }
    }
    let mut parent = PathBuf::new();
    if let Some(dirs) = entry_rel.parent() {
        for c in dirs.components() {
            if let Component::Normal(n) = c {
                parent.push(n);
                b.ops.push(Op::Mkdir {
                    path: cstr(work_host.join(&parent))?,
                    mode: 0o755,
                });
            }
        }
    }
    b.ops.push(Op::Copy {
        src: cstr(i.dir.entry())?,
        dst: cstr(work_host.join(&entry_rel))?,
        mode: 0o644,
    });
    // Nothing can be created in the root itself.
    b.ops.push(Op::Remount {
        dst: cstr(&root)?,
        flags: libc::MS_RDONLY | nosuid_nodev,
    });
    // The staging directory is mode 0700 and owned by the host's root: fine, the init
    // reads it before leaving the host's user namespace.
    let _ = std::fs::set_permissions(staging, std::fs::Permissions::from_mode(0o700));

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
        (all, rules)
    });
    let landlock = match landlock {
        Some((handled, rules)) => Some(LandlockPlan {
            handled,
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
    let argv = vec![cstr(&i.interp.program)?, cstr(&entry_inside)?];
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
        cwd: cstr(WORK_DIR)?,
        program: cstr(&i.interp.program)?,
        argv_ptrs: ptr_array(&argv),
        envp_ptrs: ptr_array(&envp),
        _argv: argv,
        _envp: envp,
        rlimits: RlimitSet::from_limits(&i.spec.limits),
        landlock,
        seccomp: i.seccomp.clone().map(|filters| SeccompPlan { filters }),
        fds: i.fds,
        cgroup_join: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
