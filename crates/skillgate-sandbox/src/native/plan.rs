//! Everything the sandbox's processes need, computed before the fork: every path, string,
//! argument vector, mount flag and BPF program. The code after the fork only walks these
//! values with system calls, so it never allocates.
use crate::rlimits::RlimitSet;
use std::ffi::{CString, c_char};
use std::os::fd::RawFd;

/// One step of building the new root, executed in order by the sandbox's init while it is
/// still root of the host's user namespace (so it can read the interpreter's prefix even
/// under a private home directory) in its own mount namespace.
#[derive(Debug)]
pub(crate) enum Op {
    /// `mkdir(path, mode)`; an existing directory is fine.
    Mkdir { path: CString, mode: u32 },
    /// `symlink(target, link)`.
    Symlink { target: CString, link: CString },
    /// A tmpfs with these options (`size=...,mode=...`).
    Tmpfs {
        dst: CString,
        data: CString,
        flags: u64,
    },
    /// A bind mount, remounted read-only with `ro_flags` when given (the source mount's
    /// locked flags plus nosuid, nodev).
    Bind {
        src: CString,
        dst: CString,
        ro_flags: Option<u64>,
    },
    /// Creates an empty file (a mount point for a bind-mounted file).
    Touch { path: CString },
    /// Copies a regular file's bytes into a new file.
    Copy {
        src: CString,
        dst: CString,
        mode: u32,
    },
    /// Writes these bytes into a new file.
    Write {
        dst: CString,
        bytes: std::sync::Arc<[u8]>,
        mode: u32,
    },
    /// A fresh proc for the sandbox's pid namespace, showing as little as the kernel
    /// allows (see [`super::child::ProcView`]); when it shows `sys` (a full proc), that is
    /// made read-only with `ro_flags`.
    Proc {
        dst: CString,
        sys: CString,
        ro_flags: u64,
    },
    /// Remounts an existing mount point with these flags.
    Remount { dst: CString, flags: u64 },
}

/// One landlock rule: a path inside the sandbox and the access allowed beneath it.
#[derive(Debug)]
pub(crate) struct LandlockRule {
    pub(crate) path: CString,
    pub(crate) access: u64,
}

/// The landlock ruleset, when the kernel supports landlock.
#[derive(Debug)]
pub(crate) struct LandlockPlan {
    pub(crate) handled: u64,
    /// Landlock scopes (ABI 6): with `LANDLOCK_SCOPE_SIGNAL` the skill can signal no
    /// process outside its own domain; 0 on older kernels.
    pub(crate) scoped: u64,
    pub(crate) rules: Vec<LandlockRule>,
}

/// Compiled seccomp filters, each ready for `prctl(PR_SET_SECCOMP)`, in installation order.
#[derive(Debug)]
pub(crate) struct SeccompPlan {
    pub(crate) filters: Vec<Vec<libc::sock_filter>>,
}

/// The file descriptors the sandbox's processes use (all opened O_CLOEXEC by the parent).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChildFds {
    pub(crate) stdin: RawFd,
    pub(crate) stdout: RawFd,
    pub(crate) stderr: RawFd,
    /// Messages to the parent (see [`super::child::Msg`]).
    pub(crate) status: RawFd,
    /// The parent writes one byte once the id maps are written; it closes its end when it
    /// has collected the artifacts, which tells the init to exit.
    pub(crate) sync: RawFd,
}

/// The whole plan.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) new_root: CString,
    pub(crate) ops: Vec<Op>,
    pub(crate) hostname: CString,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) cap_last_cap: u32,
    pub(crate) cwd: CString,
    pub(crate) program: CString,
    // Keep the strings alive for the pointer arrays below.
    pub(crate) _argv: Vec<CString>,
    pub(crate) _envp: Vec<CString>,
    pub(crate) argv_ptrs: Vec<*const c_char>,
    pub(crate) envp_ptrs: Vec<*const c_char>,
    pub(crate) rlimits: RlimitSet,
    pub(crate) landlock: Option<LandlockPlan>,
    pub(crate) seccomp: Option<SeccompPlan>,
    pub(crate) fds: ChildFds,
    /// Cgroup `tasks` files (opened by the parent) the init writes `0` to before anything
    /// else, so it joins the run's cgroups itself: a thread moving itself skips the
    /// global lock a move by pid takes (milliseconds per run on cgroup v1).
    pub(crate) cgroup_join: Vec<RawFd>,
    /// A cgroup `tasks` file (v1 memory) the interpreter process writes `0` to before it
    /// execs; the init keeps it open until then.
    pub(crate) skill_cgroup_join: Option<RawFd>,
    /// The wall-clock deadline on the monotonic clock: the init kills the skill then, even
    /// if the host does not (set by the host when it starts the run).
    pub(crate) deadline: libc::timespec,
    /// The host's command-line area (start address, length), blanked in the init: its
    /// `/proc/<pid>/cmdline` is readable whatever its dumpable flag says.
    pub(crate) host_args: Option<(usize, usize)>,
}

/// Builds a NUL-terminated pointer array over `strings`.
pub(crate) fn ptr_array(strings: &[CString]) -> Vec<*const c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// A C string from a path or text; an interior NUL is a clear error, not a panic.
pub(crate) fn cstr(s: impl AsRef<std::ffi::OsStr>) -> Result<CString, skillgate_core::ExecError> {
    use std::os::unix::ffi::OsStrExt;
    let b = s.as_ref().as_bytes();
    CString::new(b).map_err(|_| {
        skillgate_core::ExecError::Other(format!(
            "`{}` contains a NUL byte",
            String::from_utf8_lossy(b)
        ))
    })
}
