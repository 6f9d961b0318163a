//! The process supervisor: starts one process, feeds its stdin, reads stdout and stderr
//! concurrently under caps, enforces the wall clock by killing its whole process group,
//! and reports how it ended and what it cost.
//!
//! It is blocking by design (threads, not tasks): the executor runs it on tokio's blocking
//! pool, so a stuck pipe can never stall the async runtime.
use skillgate_core::{ExecError, Limits, ResourceUsage};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// How long the supervisor keeps reading stdout and stderr after the main process exited
/// and its process group was killed. A process that left the group (`setsid`) and holds the
/// pipes open is abandoned after this.
pub const DRAIN_GRACE: Duration = Duration::from_millis(250);

/// What to run.
#[derive(Debug, Clone)]
pub struct ProcessConfig {
    /// The executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Working directory.
    pub cwd: PathBuf,
    /// The complete environment (nothing is inherited).
    pub env: BTreeMap<String, String>,
    /// Bytes written to stdin, which is then closed.
    pub stdin: Vec<u8>,
    /// Limits: wall clock, CPU time, file size, open files and output caps apply here.
    pub limits: Limits,
}

/// How a supervised process ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessResult {
    /// Exit code, when it exited.
    pub exit_code: Option<i32>,
    /// Terminating signal, when one ended it.
    pub signal: Option<i32>,
    /// Captured stdout (at most the cap).
    pub stdout: Vec<u8>,
    /// Captured stderr (at most the cap).
    pub stderr: Vec<u8>,
    /// stdout passed its cap.
    pub stdout_truncated: bool,
    /// stderr passed its cap.
    pub stderr_truncated: bool,
    /// The wall clock ran out and the process group was killed.
    pub timed_out: bool,
    /// Resource use of the main process and its reaped children.
    pub usage: ResourceUsage,
}

#[derive(Default)]
struct Capture {
    kept: Vec<u8>,
    truncated: bool,
}

/// Reads `r` to its end, keeping at most `cap` bytes and draining the rest.
fn capture(mut r: impl Read, cap: u64, into: Arc<Mutex<Capture>>, done: mpsc::Sender<()>) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let Ok(mut c) = into.lock() else { break };
                let room =
                    usize::try_from(cap.saturating_sub(c.kept.len() as u64)).unwrap_or(usize::MAX);
                let take = room.min(n);
                c.kept.extend_from_slice(&buf[..take]);
                if take < n {
                    c.truncated = true;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        }
    }
    let _ = done.send(());
}

/// stdout and stderr being read on their own threads under their caps.
pub(crate) struct Captures {
    done: mpsc::Receiver<()>,
    out: Arc<Mutex<Capture>>,
    err: Arc<Mutex<Capture>>,
}

impl Captures {
    /// Starts reading both streams.
    pub(crate) fn start(
        stdout: impl Read + Send + 'static,
        stderr: impl Read + Send + 'static,
        limits: &Limits,
    ) -> Captures {
        let (done_tx, done) = mpsc::channel();
        let out = Arc::new(Mutex::new(Capture::default()));
        let err = Arc::new(Mutex::new(Capture::default()));
        let (o, tx) = (Arc::clone(&out), done_tx.clone());
        let cap = limits.stdout_cap;
        thread::spawn(move || capture(stdout, cap, o, tx));
        let (e, tx) = (Arc::clone(&err), done_tx);
        let cap = limits.stderr_cap;
        thread::spawn(move || capture(stderr, cap, e, tx));
        Captures { done, out, err }
    }

    /// Waits at most [`DRAIN_GRACE`] for both streams to end (call it once the process is
    /// gone), then returns what was kept: stdout, its truncation, stderr, its truncation.
    /// A leftover process holding a pipe open is abandoned, never waited for.
    pub(crate) fn finish(self) -> (Vec<u8>, bool, Vec<u8>, bool) {
        let deadline = Instant::now() + DRAIN_GRACE;
        for _ in 0..2 {
            let left = deadline.saturating_duration_since(Instant::now());
            if self.done.recv_timeout(left).is_err() {
                break;
            }
        }
        let take = |c: &Arc<Mutex<Capture>>| {
            let mut g = c.lock().unwrap_or_else(|p| p.into_inner());
            (std::mem::take(&mut g.kept), g.truncated)
        };
        let (o, ot) = take(&self.out);
        let (e, et) = take(&self.err);
        (o, ot, e, et)
    }
}

/// Runs a process to completion under the supervisor.
///
/// ```no_run
/// use skillgate_sandbox::supervisor::{run, ProcessConfig};
/// let res = run(ProcessConfig {
///     program: "/bin/cat".into(),
///     args: vec![],
///     cwd: "/".into(),
///     env: Default::default(),
///     stdin: b"hello".to_vec(),
///     limits: Default::default(),
/// }).unwrap();
/// assert_eq!(res.stdout, b"hello");
/// ```
pub fn run(cfg: ProcessConfig) -> Result<ProcessResult, ExecError> {
    let limits = cfg.limits;
    let mut cmd = Command::new(&cfg.program);
    cmd.args(&cfg.args)
        .current_dir(&cfg.cwd)
        .env_clear()
        .envs(&cfg.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let rlimits = crate::rlimits::RlimitSet::from_limits(&limits);
    #[allow(unsafe_code)]
    // SAFETY: the closure runs in the child between fork and exec, so it may only make
    // async-signal-safe calls: `setsid` and `setrlimit` are plain system calls through
    // rustix, and `apply` allocates nothing (the values were computed before the fork).
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::setsid().map_err(std::io::Error::from)?;
            rlimits.apply()
        });
    }
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| ExecError::io(format!("starting {}", cfg.program.display()), e))?;
    let pid = child.id() as i32;

    let mut stdin = child.stdin.take().expect("stdin was piped");
    let input = cfg.stdin;
    let writer = thread::spawn(move || {
        // A skill that never reads its stdin closes the pipe: EPIPE is not our failure.
        let _ = stdin.write_all(&input);
    });

    let captures = Captures::start(
        child.stdout.take().expect("stdout was piped"),
        child.stderr.take().expect("stderr was piped"),
        &limits,
    );
    // The child is reaped by wait4 below, never by `Child::wait`.
    drop(child);

    let (exit_tx, exit_rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = exit_tx.send(crate::reap::wait4(pid));
    });

    let mut timed_out = false;
    let waited = match exit_rx.recv_timeout(limits.wall_timeout) {
        Ok(w) => w,
        Err(_) => {
            timed_out = true;
            crate::reap::kill_group(pid);
            exit_rx
                .recv()
                .map_err(|_| ExecError::Other("the reaper thread vanished".into()))?
        }
    };
    let wall = started.elapsed();
    // Whatever the main process left behind in its group dies with it.
    crate::reap::kill_group(pid);
    let waited = waited.map_err(|e| ExecError::io("waiting for the skill", e))?;

    let (stdout, stdout_truncated, stderr, stderr_truncated) = captures.finish();
    let _ = writer.join();
    Ok(ProcessResult {
        exit_code: waited.exit_code,
        signal: waited.signal,
        stdout,
        stderr,
        stdout_truncated,
        stderr_truncated,
        timed_out,
        usage: ResourceUsage {
            wall,
            user_cpu: waited.user_cpu,
            system_cpu: waited.system_cpu,
            max_rss_bytes: waited.max_rss_bytes,
        },
    })
}
