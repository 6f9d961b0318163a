//! Reaping a child with its resource usage, and killing a process group.
#![allow(unsafe_code)]

use std::time::Duration;

/// How a reaped process ended and what it used.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Waited {
    pub(crate) exit_code: Option<i32>,
    pub(crate) signal: Option<i32>,
    pub(crate) user_cpu: Duration,
    pub(crate) system_cpu: Duration,
    pub(crate) max_rss_bytes: u64,
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::from_secs(tv.tv_sec.max(0) as u64) + Duration::from_micros(tv.tv_usec.max(0) as u64)
}

/// Blocks until `pid` ends, retrying on EINTR.
pub(crate) fn wait4(pid: i32) -> std::io::Result<Waited> {
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is a plain C struct for which all-zero bytes are a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `usage` are valid, writable and live for the call; `pid` is
        // our own child, which no other code reaps (the `Child` handle was dropped unwaited).
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            break;
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
    let (exit_code, signal) = if libc::WIFEXITED(status) {
        (Some(libc::WEXITSTATUS(status)), None)
    } else if libc::WIFSIGNALED(status) {
        (None, Some(libc::WTERMSIG(status)))
    } else {
        (None, None)
    };
    Ok(Waited {
        exit_code,
        signal,
        user_cpu: timeval(usage.ru_utime),
        system_cpu: timeval(usage.ru_stime),
        // ru_maxrss is in kilobytes on Linux.
        max_rss_bytes: (usage.ru_maxrss.max(0) as u64) * 1024,
    })
}

/// Sends SIGKILL to the process group `pgid` (the skill made itself its leader with
/// `setsid`). A group that is already gone is not an error.
pub(crate) fn kill_group(pgid: i32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pgid) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}
