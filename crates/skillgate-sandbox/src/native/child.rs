//! The code that runs between the fork and the skill's `execve`: the sandbox's init (pid 1
//! of the new pid namespace) and the interpreter process it starts.
//!
//! Every function here runs in a child created by a raw `clone` of a multi-threaded
//! process, so it may only make async-signal-safe calls: raw system calls on values the
//! parent prepared ([`Plan`]). Nothing here allocates, locks or unwinds; a failure is
//! reported to the parent as a fixed-size [`Msg`] on the status pipe, then `_exit`.
//!
//! The order follows runc's and bubblewrap's: build the new root while still privileged
//! in a private mount namespace (so the interpreter's prefix is readable even under a
//! `0700` home), mount a fresh proc, `pivot_root`, then enter a new user namespace whose
//! id maps the parent writes, then the network, ipc, uts, cgroup and a second mount
//! namespace (which locks every mount: the skill cannot unmount anything to see beneath).
//! The interpreter process then drops supplementary groups, the capability bounding set,
//! switches to the unprivileged uid/gid, sets no_new_privs, restricts itself with
//! landlock, installs the seccomp filter last, and execs.
#![allow(unsafe_code)]

use super::plan::{Op, Plan};
use std::ffi::CStr;
use std::ptr::null;

/// A message from the sandbox's processes to the parent: [`MSG_LEN`] bytes, written
/// atomically (far below `PIPE_BUF`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Msg {
    pub(crate) kind: u32,
    pub(crate) a: i32,
    pub(crate) b: i32,
    pub(crate) c: i32,
    /// With [`MSG_DONE`]: what the skill's processes used, as the init's reaped children
    /// (`getrusage(RUSAGE_CHILDREN)`): user and system CPU in microseconds, peak RSS in KiB.
    pub(crate) usage: [i64; 3],
}

/// The init entered its user namespace and waits for the id maps: `a` = the
/// [`ProcView`] its `/proc` got.
pub(crate) const MSG_READY: u32 = 1;
/// Setting up failed: `a` = [`Stage`], `b` = errno, `c` = index of the mount step.
pub(crate) const MSG_SETUP_FAILED: u32 = 2;
/// The interpreter process could not be confined or exec'd: `a` = stage, `b` = errno.
pub(crate) const MSG_EXEC_FAILED: u32 = 3;
/// The skill ended: `a` = exit code (or -1), `b` = signal (or 0), `c` = 1 when the init
/// killed it at the wall-clock deadline, `usage` = its resource usage. Everything else in
/// the sandbox was killed and reaped before this is sent.
pub(crate) const MSG_DONE: u32 = 4;

/// Size of a [`Msg`] on the wire.
pub(crate) const MSG_LEN: usize = 40;

impl Msg {
    pub(crate) fn to_bytes(self) -> [u8; MSG_LEN] {
        let mut b = [0u8; MSG_LEN];
        b[0..4].copy_from_slice(&self.kind.to_ne_bytes());
        b[4..8].copy_from_slice(&self.a.to_ne_bytes());
        b[8..12].copy_from_slice(&self.b.to_ne_bytes());
        b[12..16].copy_from_slice(&self.c.to_ne_bytes());
        for (i, v) in self.usage.iter().enumerate() {
            b[16 + 8 * i..24 + 8 * i].copy_from_slice(&v.to_ne_bytes());
        }
        b
    }

    pub(crate) fn from_bytes(b: &[u8; MSG_LEN]) -> Msg {
        let word = |i: usize| [b[i], b[i + 1], b[i + 2], b[i + 3]];
        let long = |i: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[16 + 8 * i..24 + 8 * i]);
            i64::from_ne_bytes(w)
        };
        Msg {
            kind: u32::from_ne_bytes(word(0)),
            a: i32::from_ne_bytes(word(4)),
            b: i32::from_ne_bytes(word(8)),
            c: i32::from_ne_bytes(word(12)),
            usage: [long(0), long(1), long(2)],
        }
    }
}

/// Where in the setup a failure happened (sent as `Msg::a`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub(crate) enum Stage {
    MakePrivate = 1,
    MountStep,
    PivotRoot,
    UnshareUser,
    WaitMaps,
    BecomeRoot,
    UnshareRest,
    Hostname,
    Loopback,
    Fork,
    Stdio,
    Rlimits,
    DropCaps,
    SetIds,
    NoNewPrivs,
    Chdir,
    Landlock,
    Seccomp,
    Exec,
    JoinCgroup,
}

impl Stage {
    /// What the stage does, for error messages.
    pub(crate) fn describe(code: i32) -> &'static str {
        const NAMES: [&str; 20] = [
            "making the mount tree private",
            "building the sandbox's root file system",
            "pivot_root into the new root",
            "creating the user namespace",
            "waiting for the uid/gid maps",
            "becoming root of the user namespace",
            "creating the network, ipc, uts, cgroup and mount namespaces",
            "setting the hostname",
            "bringing up loopback",
            "starting the interpreter process",
            "connecting stdin, stdout and stderr",
            "applying rlimits",
            "dropping capabilities",
            "switching to the sandbox uid/gid",
            "setting no_new_privs",
            "entering the work directory",
            "applying the landlock ruleset",
            "installing the seccomp filter",
            "executing the interpreter",
            "joining the run's cgroup",
        ];
        usize::try_from(code - 1)
            .ok()
            .and_then(|i| NAMES.get(i))
            .copied()
            .unwrap_or("an unknown step")
    }
}

/// What the sandbox's `/proc` shows, the first mount the kernel accepted, best first (sent
/// with [`MSG_READY`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub(crate) enum ProcView {
    /// `subset=pid,hidepid=invisible`: only the sandbox's own processes, and of them only
    /// those of the same user (the skill never sees its init); no host-wide files.
    PidsOnly = 0,
    /// `hidepid=2` (kernels before 5.8): processes of other users are hidden, but host-wide
    /// files (`/proc/cmdline`, counters, the boot id) are readable.
    HidePid = 1,
    /// A plain proc: every host-wide file is readable; the init's command line is blanked.
    Full = 2,
}

/// The proc mount options tried in order, as [`ProcView`] numbers them.
const PROC_OPTIONS: [&CStr; 2] = [c"subset=pid,hidepid=invisible", c"hidepid=2"];

impl ProcView {
    /// The view a [`MSG_READY`] names.
    pub(crate) fn from_code(code: i32) -> ProcView {
        match code {
            0 => ProcView::PidsOnly,
            1 => ProcView::HidePid,
            _ => ProcView::Full,
        }
    }

    /// For the enforcement finding.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            ProcView::PidsOnly => "own processes only (subset=pid,hidepid=invisible)",
            ProcView::HidePid => {
                "other users' processes hidden (hidepid=2; this kernel refused subset=pid, \
                 so host-wide /proc files are readable)"
            }
            ProcView::Full => {
                "full (this kernel refused hidepid and subset=pid: host-wide /proc files \
                 are readable)"
            }
        }
    }
}

/// Starts the sandbox's init in new mount and pid namespaces; returns its pid (in the
/// caller's pid namespace). The child never returns from here.
pub(crate) fn spawn(plan: &Plan) -> std::io::Result<i32> {
    let flags = (libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::SIGCHLD) as libc::c_ulong;
    // SAFETY: a raw clone without a new stack behaves like fork: the child gets a copy of
    // this thread's stack and memory. It only runs `init`, which makes async-signal-safe
    // system calls on the already built `plan` and ends in `_exit`, never returning into
    // Rust code that could touch locks or allocators held by other threads.
    let pid = unsafe { libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) };
    if pid < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if pid == 0 {
        init(plan);
    }
    Ok(pid as i32)
}

fn errno() -> i32 {
    // SAFETY: reading the calling thread's errno location is always valid.
    unsafe { *libc::__errno_location() }
}

fn send(fd: i32, msg: Msg) {
    let b = msg.to_bytes();
    // SAFETY: writes 16 bytes from a live stack buffer; a short or failed write only
    // loses the message, which the parent treats as a failure.
    unsafe {
        libc::write(fd, b.as_ptr().cast(), MSG_LEN);
    }
}

fn fail(plan: &Plan, kind: u32, stage: Stage, index: i32) -> ! {
    let e = errno();
    send(
        plan.fds.status,
        Msg {
            kind,
            a: stage as i32,
            b: e,
            c: index,
            ..Msg::default()
        },
    );
    // SAFETY: `_exit` ends the process without running any Rust or libc cleanup.
    unsafe { libc::_exit(125) }
}

fn check(plan: &Plan, r: libc::c_long, stage: Stage) {
    if r < 0 {
        fail(plan, MSG_SETUP_FAILED, stage, -1);
    }
}

fn p(c: &CStr) -> *const libc::c_char {
    c.as_ptr()
}

/// Pid 1 of the sandbox. Builds the root, enters the remaining namespaces, starts the
/// interpreter, reaps everything, reports, and exits when the parent lets it go.
fn init(plan: &Plan) -> ! {
    let st = plan.fds.status;
    // SAFETY: for the whole block, every pointer passed is a NUL-terminated string or a
    // struct owned by `plan` or this stack frame, alive for each call; the calls are plain
    // system calls, async-signal-safe.
    unsafe {
        // Join the run's cgroups before anything else: every process of the sandbox
        // starts inside them. `0` is this (single-threaded) process.
        for &fd in &plan.cgroup_join {
            if libc::write(fd, c"0".as_ptr().cast(), 1) != 1 {
                fail(plan, MSG_SETUP_FAILED, Stage::JoinCgroup, -1);
            }
        }
        close_all_but(plan);
        // A session and process group of its own: the host's group (and every other run
        // started from it) is out of reach of `kill(0, ...)` and of terminal signals.
        libc::setsid();
        // The init is a copy of the host process (its memory holds the caller's
        // environment): nobody in the sandbox may read it through /proc/1.
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        // Nor its command line (world-readable whatever the dumpable flag) or name.
        if let Some((start, len)) = plan.host_args {
            std::ptr::write_bytes(start as *mut u8, 0, len);
        }
        libc::prctl(libc::PR_SET_NAME, c"sandbox-init".as_ptr(), 0, 0, 0);
        // The out-of-memory killer never chooses the init (the host's /proc still shows
        // `self` as this process; the skill's processes are raised to 1000 below). Best
        // effort: without CAP_SYS_RESOURCE an init killed anyway is reported as such.
        set_oom_score_adj(c"/proc/self/oom_score_adj", b"-1000");
        let r = libc::mount(
            null(),
            c"/".as_ptr(),
            null(),
            libc::MS_REC | libc::MS_PRIVATE,
            null(),
        );
        check(plan, r.into(), Stage::MakePrivate);
        let mut proc_view = ProcView::Full as i32;
        for (i, op) in plan.ops.iter().enumerate() {
            let r = run_op(op);
            if r < 0 {
                fail(plan, MSG_SETUP_FAILED, Stage::MountStep, i as i32);
            }
            if let Op::Proc { .. } = op {
                proc_view = r;
            }
        }
        check(
            plan,
            libc::chdir(p(&plan.new_root)).into(),
            Stage::PivotRoot,
        );
        check(
            plan,
            libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()),
            Stage::PivotRoot,
        );
        check(
            plan,
            libc::umount2(c".".as_ptr(), libc::MNT_DETACH).into(),
            Stage::PivotRoot,
        );
        check(plan, libc::chdir(c"/".as_ptr()).into(), Stage::PivotRoot);

        check(
            plan,
            libc::unshare(libc::CLONE_NEWUSER).into(),
            Stage::UnshareUser,
        );
        send(
            st,
            Msg {
                kind: MSG_READY,
                a: proc_view,
                ..Msg::default()
            },
        );
        let mut go = 0u8;
        if libc::read(plan.fds.sync, (&raw mut go).cast(), 1) != 1 {
            fail(plan, MSG_SETUP_FAILED, Stage::WaitMaps, -1);
        }
        check(plan, set_ids(0, 0), Stage::BecomeRoot);
        let rest = libc::CLONE_NEWNS
            | libc::CLONE_NEWNET
            | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUTS
            | libc::CLONE_NEWCGROUP;
        check(plan, libc::unshare(rest).into(), Stage::UnshareRest);
        let host = plan.hostname.as_bytes();
        check(
            plan,
            libc::sethostname(host.as_ptr().cast(), host.len()).into(),
            Stage::Hostname,
        );
        loopback_up(plan);

        // SIGCHLD is blocked from here on and read from a signalfd, so the init can wait
        // for its children, the host and the deadline at once without missing one.
        let mut chld: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut chld);
        libc::sigaddset(&mut chld, libc::SIGCHLD);
        libc::sigprocmask(libc::SIG_BLOCK, &chld, std::ptr::null_mut());

        // The interpreter process shares the init's memory until it execs or exits
        // (CLONE_VM | CLONE_VFORK, as posix_spawn does), so starting it copies no page
        // tables; the init sleeps until then. It runs on a stack of its own.
        let stack = libc::mmap(
            std::ptr::null_mut(),
            SKILL_STACK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
            -1,
            0,
        );
        if stack == libc::MAP_FAILED {
            fail(plan, MSG_SETUP_FAILED, Stage::Fork, -1);
        }
        let child = libc::clone(
            start_skill,
            stack.cast::<u8>().add(SKILL_STACK).cast(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            std::ptr::from_ref(plan).cast_mut().cast(),
        );
        if child < 0 {
            fail(plan, MSG_SETUP_FAILED, Stage::Fork, -1);
        }
        // The child has exec'd (or exited): its stack is free.
        libc::munmap(stack, SKILL_STACK);
        // The skill's processes are the out-of-memory killer's first choice (they inherit
        // it from the interpreter process).
        let mut path = [0u8; 40];
        set_oom_score_adj(proc_file(&mut path, child, b"oom_score_adj"), b"1000");
        let child = libc::c_long::from(child);
        // The init keeps nothing of the skill's stdio: the parent sees end-of-file as soon
        // as the skill's processes are gone.
        for fd in [0, 1, 2, plan.fds.stdin, plan.fds.stdout, plan.fds.stderr] {
            libc::close(fd);
        }
        let sigfd = libc::signalfd(-1, &chld, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
        if sigfd < 0 {
            // The skill runs already: ending the init ends it.
            fail(plan, MSG_SETUP_FAILED, Stage::Fork, -1);
        }
        let (mut code, mut sig, mut timed_out) = (-1, 0, 0);
        let mut skill_done = false;
        loop {
            // Reap whatever has ended.
            let mut all_reaped = false;
            loop {
                let mut status = 0;
                let r = libc::waitpid(-1, &mut status, libc::WNOHANG);
                if r == 0 {
                    break;
                }
                if r < 0 {
                    if errno() == libc::EINTR {
                        continue;
                    }
                    all_reaped = true; // ECHILD
                    break;
                }
                if libc::c_long::from(r) == child {
                    if libc::WIFEXITED(status) {
                        code = libc::WEXITSTATUS(status);
                    } else if libc::WIFSIGNALED(status) {
                        sig = libc::WTERMSIG(status);
                    }
                    skill_done = true;
                }
                if skill_done {
                    // The skill is done: whatever it left behind (daemons, orphans holding
                    // stdout) dies now. Pid 1's kill(-1) reaches every process of the
                    // namespace.
                    libc::kill(-1, libc::SIGKILL);
                }
            }
            if all_reaped {
                break;
            }
            let timeout_ms = if skill_done {
                -1
            } else {
                match millis_until(&plan.deadline) {
                    Some(ms) => ms,
                    None => {
                        // The wall clock ran out, and the host has not acted (it may be
                        // stopped): the init enforces it.
                        timed_out = 1;
                        skill_done = true;
                        libc::kill(-1, libc::SIGKILL);
                        continue;
                    }
                }
            };
            let mut fds = [
                libc::pollfd {
                    fd: sigfd,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: plan.fds.sync,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            if libc::poll(fds.as_mut_ptr(), 2, timeout_ms) < 0 && errno() != libc::EINTR {
                // Cannot wait for the host and the clock any more: end the skill, and
                // reap everything below.
                libc::kill(-1, libc::SIGKILL);
                while libc::waitpid(-1, std::ptr::null_mut(), 0) > 0 || errno() == libc::EINTR {}
                break;
            }
            if fds[1].revents != 0 {
                // The host never writes again before it closes its end: end-of-file means
                // the host is gone (killed, crashed) or gave the run up. The sandbox ends
                // with its init: the kernel kills every process of the namespace.
                libc::_exit(0);
            }
            if fds[0].revents != 0 {
                let mut info = [0u8; std::mem::size_of::<libc::signalfd_siginfo>()];
                while libc::read(sigfd, info.as_mut_ptr().cast(), info.len()) > 0 {}
            }
        }
        // Every process of the sandbox is reaped: its children's usage is the skill's.
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru);
        let micros = |t: libc::timeval| t.tv_sec * 1_000_000 + t.tv_usec;
        send(
            st,
            Msg {
                kind: MSG_DONE,
                a: code,
                b: sig,
                c: timed_out,
                usage: [micros(ru.ru_utime), micros(ru.ru_stime), ru.ru_maxrss],
            },
        );
        // Stay alive (keeping /out readable through /proc/<pid>/root) until the parent
        // closes its end of the sync pipe.
        let mut b = 0u8;
        while libc::read(plan.fds.sync, (&raw mut b).cast(), 1) > 0 {}
        libc::_exit(0)
    }
}

/// Drops supplementary groups and sets every uid and gid, through raw system calls: the
/// libc wrappers would try to change the credentials of every thread of the process they
/// were cloned from (glibc's setxid broadcast) and wait forever for threads that do not
/// exist in this child.
fn set_ids(uid: u32, gid: u32) -> libc::c_long {
    // SAFETY: plain system calls with integer arguments and a null group list of length 0.
    unsafe {
        let r = libc::syscall(libc::SYS_setgroups, 0usize, null::<libc::gid_t>());
        if r < 0 {
            return r;
        }
        let r = libc::syscall(libc::SYS_setresgid, gid, gid, gid);
        if r < 0 {
            return r;
        }
        libc::syscall(libc::SYS_setresuid, uid, uid, uid)
    }
}

/// Writes `value` to an `oom_score_adj` file; a failure is ignored (see the callers).
fn set_oom_score_adj(path: &CStr, value: &[u8]) {
    // SAFETY: `path` is NUL-terminated and `value` a live slice, both alive for the calls.
    unsafe {
        let fd = libc::open(p(path), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd >= 0 {
            libc::write(fd, value.as_ptr().cast(), value.len());
            libc::close(fd);
        }
    }
}

/// `/proc/<pid>/<file>` written into `buf`, without allocating.
fn proc_file<'a>(buf: &'a mut [u8; 40], pid: libc::c_int, file: &[u8]) -> &'a CStr {
    let mut digits = [0u8; 10];
    let mut n = pid.unsigned_abs();
    let mut len = 0;
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut at = 0;
    for &b in b"/proc/"
        .iter()
        .chain(digits[..len].iter().rev())
        .chain(b"/")
        .chain(file.iter().take(buf.len() - 18))
    {
        buf[at] = b;
        at += 1;
    }
    buf[at] = 0;
    CStr::from_bytes_until_nul(&buf[..=at]).unwrap_or(c"/proc/self/oom_score_adj")
}

/// The monotonic clock's time `after` from now (the clock of `Instant`), for the init's
/// deadline.
pub(crate) fn monotonic_after(after: std::time::Duration) -> libc::timespec {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes into a live timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    let ns = i128::from(now.tv_sec) * 1_000_000_000
        + i128::from(now.tv_nsec)
        + i128::try_from(after.as_nanos()).unwrap_or(i128::MAX / 2);
    libc::timespec {
        tv_sec: (ns / 1_000_000_000).min(i128::from(libc::time_t::MAX)) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

/// Milliseconds (rounded up) until `deadline` on the monotonic clock, or `None` once it
/// has passed.
fn millis_until(deadline: &libc::timespec) -> Option<libc::c_int> {
    let mut now: libc::timespec = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes into a live timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    let ns = (i128::from(deadline.tv_sec) - i128::from(now.tv_sec)) * 1_000_000_000
        + i128::from(deadline.tv_nsec)
        - i128::from(now.tv_nsec);
    if ns <= 0 {
        return None;
    }
    Some(((ns + 999_999) / 1_000_000).min(i128::from(libc::c_int::MAX)) as libc::c_int)
}

/// Closes every descriptor the init inherited except its own five (and the skill's cgroup
/// file): the clone copied the
/// whole descriptor table, including other concurrent runs' pipe ends, which must not be
/// kept open (a skill waiting for end-of-file on stdin would wait forever).
fn close_all_but(plan: &Plan) {
    let f = plan.fds;
    // The skill's cgroup file, if any, or a repeat of one kept anyway.
    let join = plan.skill_cgroup_join.unwrap_or(f.sync);
    let mut keep = [f.stdin, f.stdout, f.stderr, f.status, f.sync, join];
    keep.sort_unstable();
    let mut from: u32 = 0;
    for fd in keep {
        let fd = fd as u32;
        if fd > from {
            // SAFETY: close_range only closes descriptors of this process.
            unsafe { libc::syscall(libc::SYS_close_range, from, fd - 1, 0u32) };
        }
        from = fd + 1;
    }
    // SAFETY: as above.
    unsafe { libc::syscall(libc::SYS_close_range, from, u32::MAX, 0u32) };
}

/// Runs one mount step; returns the failing call's result (< 0) or 0.
/// Creates (or truncates) a file for writing.
fn create(path: &CStr, mode: u32) -> libc::c_int {
    // SAFETY: `path` is a NUL-terminated string alive for the call.
    unsafe {
        libc::open(
            p(path),
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
            mode,
        )
    }
}

/// Writes all of `bytes` to `fd`: 0, or -1 on an error or a write that makes no progress.
fn write_all(fd: libc::c_int, mut bytes: &[u8]) -> libc::c_int {
    while !bytes.is_empty() {
        // SAFETY: writes from a live slice, at most its length.
        let w = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if w <= 0 {
            return -1;
        }
        bytes = &bytes[w as usize..];
    }
    0
}

fn run_op(op: &Op) -> libc::c_int {
    // SAFETY: every pointer is a NUL-terminated string owned by the plan, alive for the
    // call; `buf` is a stack buffer of the size passed.
    unsafe {
        match op {
            Op::Mkdir { path, mode } => {
                if libc::mkdir(p(path), *mode) < 0 && errno() != libc::EEXIST {
                    return -1;
                }
                0
            }
            Op::Symlink { target, link } => libc::symlink(p(target), p(link)),
            Op::Tmpfs { dst, data, flags } => libc::mount(
                c"tmpfs".as_ptr(),
                p(dst),
                c"tmpfs".as_ptr(),
                *flags,
                data.as_ptr().cast(),
            ),
            Op::Bind { src, dst, ro_flags } => bind(src, dst, *ro_flags),
            Op::Touch { path } => {
                let fd = libc::open(
                    p(path),
                    libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                    0o644,
                );
                if fd < 0 {
                    return -1;
                }
                libc::close(fd);
                0
            }
            Op::Copy { src, dst, mode } => {
                let from = libc::open(p(src), libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW);
                if from < 0 {
                    return -1;
                }
                let to = create(dst, *mode);
                if to < 0 {
                    libc::close(from);
                    return -1;
                }
                let mut buf = [0u8; 16 * 1024];
                let r = loop {
                    let n = libc::read(from, buf.as_mut_ptr().cast(), buf.len());
                    if n <= 0 {
                        break if n < 0 { -1 } else { 0 };
                    }
                    if write_all(to, &buf[..n as usize]) < 0 {
                        break -1;
                    }
                };
                libc::close(from);
                libc::close(to);
                r
            }
            Op::Write { dst, bytes, mode } => {
                let to = create(dst, *mode);
                if to < 0 {
                    return -1;
                }
                let r = write_all(to, bytes);
                libc::close(to);
                r
            }
            Op::Proc { dst, sys, ro_flags } => {
                let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                let proc = |data: *const libc::c_void| {
                    libc::mount(c"proc".as_ptr(), p(dst), c"proc".as_ptr(), flags, data)
                };
                // The best view this kernel accepts (see ProcView).
                for (view, options) in PROC_OPTIONS.iter().enumerate() {
                    if proc(options.as_ptr().cast()) == 0 {
                        return if view == ProcView::PidsOnly as usize {
                            // No /proc/sys to protect.
                            view as libc::c_int
                        } else {
                            read_only_sys(sys, *ro_flags).min(view as libc::c_int)
                        };
                    }
                }
                if proc(null()) < 0 {
                    return -1;
                }
                read_only_sys(sys, *ro_flags).min(ProcView::Full as libc::c_int)
            }
            Op::Remount { dst, flags } => {
                libc::mount(null(), p(dst), null(), libc::MS_REMOUNT | *flags, null())
            }
        }
    }
}

/// A bind mount, remounted read-only with `ro_flags` when given; the failing call's
/// result (< 0) or 0.
fn bind(src: &CStr, dst: &CStr, ro_flags: Option<u64>) -> libc::c_int {
    // SAFETY: both paths are NUL-terminated strings alive for the calls.
    unsafe {
        let r = libc::mount(p(src), p(dst), null(), libc::MS_BIND, null());
        match (r, ro_flags) {
            (0, Some(f)) => libc::mount(
                null(),
                p(dst),
                null(),
                libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | f,
                null(),
            ),
            _ => r,
        }
    }
}

/// Makes a full proc's `/proc/sys` read-only: -1 on failure, else `c_int::MAX` (so the
/// caller's `min` keeps its view).
fn read_only_sys(sys: &CStr, ro_flags: u64) -> libc::c_int {
    if bind(sys, sys, Some(ro_flags)) < 0 {
        -1
    } else {
        libc::c_int::MAX
    }
}

/// A fresh network namespace has `lo`, down: bring it up (and nothing else exists).
fn loopback_up(plan: &Plan) {
    // SAFETY: `ifr` is a zeroed plain C struct owned by this frame; the socket is closed.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if s < 0 {
            fail(plan, MSG_SETUP_FAILED, Stage::Loopback, -1);
        }
        let mut ifr: libc::ifreq = std::mem::zeroed();
        ifr.ifr_name[0] = b'l' as libc::c_char;
        ifr.ifr_name[1] = b'o' as libc::c_char;
        ifr.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        if libc::ioctl(s, libc::SIOCSIFFLAGS, &ifr) < 0 {
            fail(plan, MSG_SETUP_FAILED, Stage::Loopback, -1);
        }
        libc::close(s);
    }
}

/// `struct landlock_ruleset_attr` up to ABI 6's `scoped` (a shorter size is passed to
/// kernels without scopes).
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// The interpreter process: confine, then exec. Never returns.
/// The interpreter process's stack until it execs.
const SKILL_STACK: usize = 256 * 1024;

/// Entry of the interpreter process (see `libc::clone` in [`init`]).
extern "C" fn start_skill(plan: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `plan` is the init's `&Plan`, alive and unchanged: the init is suspended
    // (CLONE_VFORK) until this process execs or exits, and nothing here writes to it.
    exec_skill(unsafe { &*plan.cast::<Plan>() })
}

fn exec_skill(plan: &Plan) -> ! {
    let ex = |stage: Stage| -> ! { fail(plan, MSG_EXEC_FAILED, stage, -1) };
    let fds = plan.fds;
    // SAFETY: for the whole block, raw system calls on values owned by `plan` or this
    // stack frame, alive for each call; nothing allocates.
    unsafe {
        if let Some(fd) = plan.skill_cgroup_join
            && libc::write(fd, c"0".as_ptr().cast(), 1) != 1
        {
            ex(Stage::JoinCgroup);
        }
        if libc::dup2(fds.stdin, 0) < 0
            || libc::dup2(fds.stdout, 1) < 0
            || libc::dup2(fds.stderr, 2) < 0
        {
            ex(Stage::Stdio);
        }
        // Every inherited descriptor beyond stdio closes at exec (the status pipe stays
        // usable until then, to report a failed exec).
        if libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        ) < 0
        {
            ex(Stage::Stdio);
        }
        if plan.rlimits.apply().is_err() {
            ex(Stage::Rlimits);
        }
        // Ignored signals and the signal mask survive exec: the skill starts with the
        // defaults, not whatever the embedding process had set (SIGPIPE ignored, say).
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        for sig in 1..libc::SIGRTMAX() {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        for cap in 0..=plan.cap_last_cap {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) < 0
                && errno() != libc::EINVAL
            {
                ex(Stage::DropCaps);
            }
        }
        if libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        ) < 0
        {
            ex(Stage::DropCaps);
        }
        if set_ids(plan.uid, plan.gid) < 0 {
            ex(Stage::SetIds);
        }
        let hdr = CapHeader {
            version: LINUX_CAPABILITY_VERSION_3,
            pid: 0,
        };
        let data = [CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(libc::SYS_capset, &hdr, data.as_ptr()) < 0 {
            ex(Stage::DropCaps);
        }
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 {
            ex(Stage::NoNewPrivs);
        }
        if libc::chdir(p(&plan.cwd)) < 0 {
            ex(Stage::Chdir);
        }
        if let Some(ll) = &plan.landlock {
            let attr = RulesetAttr {
                handled_access_fs: ll.handled,
                handled_access_net: 0,
                scoped: ll.scoped,
            };
            let size = if ll.scoped == 0 {
                std::mem::size_of::<u64>()
            } else {
                std::mem::size_of::<RulesetAttr>()
            };
            let rs = libc::syscall(libc::SYS_landlock_create_ruleset, &attr, size, 0u32);
            if rs < 0 {
                ex(Stage::Landlock);
            }
            for rule in &ll.rules {
                let fd = libc::open(p(&rule.path), libc::O_PATH | libc::O_CLOEXEC);
                if fd < 0 {
                    ex(Stage::Landlock);
                }
                let pb = PathBeneathAttr {
                    allowed_access: rule.access,
                    parent_fd: fd,
                };
                if libc::syscall(
                    libc::SYS_landlock_add_rule,
                    rs as libc::c_int,
                    LANDLOCK_RULE_PATH_BENEATH,
                    &pb,
                    0u32,
                ) < 0
                {
                    ex(Stage::Landlock);
                }
                libc::close(fd);
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, rs as libc::c_int, 0u32) < 0 {
                ex(Stage::Landlock);
            }
            libc::close(rs as libc::c_int);
        }
        if let Some(sc) = &plan.seccomp {
            for filter in &sc.filters {
                let prog = libc::sock_fprog {
                    len: filter.len() as libc::c_ushort,
                    filter: filter.as_ptr().cast_mut(),
                };
                if libc::prctl(
                    libc::PR_SET_SECCOMP,
                    libc::SECCOMP_MODE_FILTER as libc::c_ulong,
                    &prog,
                    0,
                    0,
                ) < 0
                {
                    ex(Stage::Seccomp);
                }
            }
        }
        libc::execve(
            p(&plan.program),
            plan.argv_ptrs.as_ptr(),
            plan.envp_ptrs.as_ptr(),
        );
        ex(Stage::Exec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip() {
        let m = Msg {
            kind: MSG_DONE,
            a: -1,
            b: 9,
            c: 3,
            usage: [1_234_567, i64::MAX, -2],
        };
        assert_eq!(Msg::from_bytes(&m.to_bytes()), m);
    }

    #[test]
    fn every_stage_has_a_description() {
        for code in Stage::MakePrivate as i32..=Stage::Exec as i32 {
            assert_ne!(Stage::describe(code), "an unknown step", "stage {code}");
        }
        assert_eq!(Stage::describe(0), "an unknown step");
    }
}
