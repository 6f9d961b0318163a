//! The native Linux sandbox: [`NativeSandbox`], the default executor of skillgate.
//!
//! One run, from the host's side:
//!
//! 1. the spec is checked against what this host can enforce (fail closed);
//! 2. a cgroup gets the memory and pids limits;
//! 3. every path, string, argument vector, file to write (the skill's code, a minimal
//!    `/etc`) and BPF program is prepared ([`plan`]); nothing of the run is written on the
//!    host;
//! 4. a raw `clone` starts the sandbox's init in new mount and pid namespaces
//!    ([`child`]); the host moves it into the cgroup, writes its uid/gid maps when it has
//!    entered its user namespace, and feeds stdin;
//! 5. stdout and stderr are captured under caps while the wall clock runs; at the deadline
//!    (or on [`cancel_runs`]) the init is killed, which kills every process of its pid
//!    namespace. The init keeps the deadline too, and ends the sandbox as soon as the
//!    host's end of its sync pipe closes: a sandbox never outlives its host;
//! 6. when the skill ends, the init kills whatever it left behind and reports how it ended
//!    and what it used; the host collects the artifacts from the sandbox's `/out` (through
//!    `/proc/<init>/root`, never following links) and returns the outcome;
//! 7. then, on a thread of its own, the host kills and reaps the init (the kernel tears the
//!    namespaces down) and removes the cgroup; dropping the sandbox waits for that.
//!
//! A sandbox that ends without the init's report (the init killed, a limit that ran out
//! during setup, a cancelled run) is still an outcome, naming why, so the layers above
//! report and audit it; only the host's own failures are errors.
mod cancel;
mod cgroup;
mod child;
mod layout;
mod plan;

pub use cancel::cancel_runs;
pub use cgroup::CgroupMode;

use crate::reap::Waited;
use crate::supervisor::{Captures, ProcessResult};
use crate::workdir::OUTPUT_DIR_ENV;
use crate::{artifacts, outcome_from};
use cgroup::{LimitEvents, RunCgroup};
use child::{
    MSG_DONE, MSG_EXEC_FAILED, MSG_LEN, MSG_READY, MSG_SETUP_FAILED, Msg, ProcView, Stage,
};
use skillgate_core::{
    BoxError, Capabilities, ExecError, ExecOutcome, ExecRequest, Finding, Language, LayerName,
    ResourceUsage, RuntimeTier, SeccompProfile, Severity, Status, units,
};
use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc;
use std::task::{Context, Poll};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Compiled seccomp filters attached to a request (in `ExecRequest::extensions`): a stack,
/// installed in order as the last step before exec (the kernel runs them all and keeps
/// the most restrictive result).
#[derive(Debug, Clone)]
pub struct SeccompFilter(pub Arc<Vec<seccompiler::BpfProgram>>);

/// Compiles the spec's seccomp profile for this machine into the filter stack to install
/// (the confinement crate provides one; see [`NativeSandbox::with_seccomp_compiler`]).
pub type SeccompCompiler =
    Arc<dyn Fn(&SeccompProfile) -> Result<Vec<seccompiler::BpfProgram>, String> + Send + Sync>;

/// Host ids the sandbox's user namespace maps to by default: inside uid 0 (the init only)
/// is `DEFAULT_HOST_ID_BASE`, inside uid `u` is `DEFAULT_HOST_ID_BASE + u`. No host
/// account owns them.
pub const DEFAULT_HOST_ID_BASE: u32 = 2_100_000_000;

/// What this host offers the sandbox, detected once.
#[derive(Debug, Clone)]
pub struct HostSupport {
    /// The cgroup interface enforcing memory and pids.
    pub cgroups: CgroupMode,
    /// The landlock ABI version, when the kernel has landlock.
    pub landlock_abi: Option<u32>,
    /// Why namespaces cannot be created here, if they cannot.
    pub namespaces: Result<(), String>,
    /// The highest capability number of this kernel.
    pub cap_last_cap: u32,
}

impl HostSupport {
    /// Probes the host (reads a few files under /proc and /sys; creates the cgroup
    /// parent `skillgate/` under skillgate's own cgroup).
    pub fn detect() -> HostSupport {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
        };
        let namespaces = if !rustix::process::geteuid().is_root() {
            Err(
                "the native sandbox needs root: it builds its root file system and cgroups as \
                 host root before entering its user namespace, and running it unprivileged \
                 (user namespaces plus delegated cgroups) is not supported. Run skillgate as \
                 root (or in a container with CAP_SYS_ADMIN). `[executor] kind = \"process\"` \
                 has no isolation at all: the isolation layer refuses it unless you also pass \
                 `--disable isolation`, so use it for trusted code only"
                    .to_string(),
            )
        } else if read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
            Err(
                "user namespaces are disabled (sysctl user.max_user_namespaces = 0): \
                 set it above 0, e.g. `sysctl -w user.max_user_namespaces=15000`"
                    .to_string(),
            )
        } else {
            Ok(())
        };
        HostSupport {
            cgroups: CgroupMode::detect(),
            landlock_abi: layout::landlock_abi(),
            namespaces,
            cap_last_cap: read("/proc/sys/kernel/cap_last_cap")
                .and_then(|s| s.parse().ok())
                .unwrap_or(63),
        }
    }

    /// A one-line summary for reports and `--verbose` output.
    pub fn describe(&self) -> String {
        format!(
            "namespaces: {}; cgroups: {}; landlock: {}",
            if self.namespaces.is_ok() { "yes" } else { "no" },
            self.cgroups.name(),
            self.landlock_abi
                .map_or("unavailable".to_string(), |v| format!("ABI {v}")),
        )
    }
}

/// The namespaced native sandbox: user, pid, mount, network, ipc, uts and cgroup
/// namespaces; a fresh read-only root with only what the interpreter needs; cgroup memory
/// and pids limits; rlimits; no capabilities, no_new_privs, landlock, and the request's
/// seccomp filter; the wall clock kills the whole pid namespace.
///
/// ```no_run
/// # async fn demo() -> Result<(), skillgate_core::BoxError> {
/// use skillgate_core::{Caller, ExecRequest, Language, Skill};
/// use skillgate_sandbox::NativeSandbox;
/// use tower::ServiceExt;
/// let skill = Skill::builder("hi", Language::Python, b"print('{}')".to_vec()).build();
/// let req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
/// let out = NativeSandbox::new().oneshot(req).await?;
/// assert_eq!(out.stdout, b"{}\n");
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct NativeSandbox {
    interpreters: Arc<HashMap<Language, PathBuf>>,
    host: Arc<HostSupport>,
    seccomp_compiler: Option<SeccompCompiler>,
    host_id_base: u32,
    teardowns: Arc<Teardowns>,
}

impl std::fmt::Debug for NativeSandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeSandbox")
            .field("interpreters", &self.interpreters)
            .field("host", &self.host)
            .field("seccomp_compiler", &self.seccomp_compiler.is_some())
            .field("host_id_base", &self.host_id_base)
            .finish()
    }
}

impl Default for NativeSandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl NativeSandbox {
    /// A sandbox for this host (detected now), finding interpreters on `PATH`.
    pub fn new() -> Self {
        NativeSandbox {
            interpreters: Arc::default(),
            host: Arc::new(HostSupport::detect()),
            seccomp_compiler: None,
            host_id_base: DEFAULT_HOST_ID_BASE,
            teardowns: Arc::default(),
        }
    }

    /// Uses `program` (a path or command name) for `language`.
    pub fn with_interpreter(mut self, language: Language, program: impl Into<PathBuf>) -> Self {
        Arc::make_mut(&mut self.interpreters).insert(language, program.into());
        self
    }

    /// Compiles the spec's seccomp profile with `compiler` when the request carries no
    /// [`SeccompFilter`] already.
    pub fn with_seccomp_compiler(mut self, compiler: SeccompCompiler) -> Self {
        self.seccomp_compiler = Some(compiler);
        self
    }

    /// Maps the sandbox's ids to host ids from `base` (see [`DEFAULT_HOST_ID_BASE`]).
    pub fn with_host_id_base(mut self, base: u32) -> Self {
        self.host_id_base = base;
        self
    }

    /// What this host offers.
    pub fn host(&self) -> &HostSupport {
        &self.host
    }

    /// What this executor enforces on this host. Memory and pids limits need cgroups; a
    /// destination allow-list is not enforced (such a spec is refused).
    pub fn capabilities(&self) -> Capabilities {
        let ns = self.host.namespaces.is_ok();
        let cg = !matches!(self.host.cgroups, CgroupMode::Unavailable(_));
        Capabilities {
            executor: "native".into(),
            tier: if ns {
                RuntimeTier::Namespace
            } else {
                RuntimeTier::Process
            },
            wall_timeout: true,
            cpu_time: true,
            memory: cg,
            pids: cg,
            pids_reported: cg,
            file_size: true,
            open_files: true,
            output_caps: true,
            workdir_size: ns,
            user: ns,
            seccomp: ns,
            seccomp_kill: ns,
            network_none: ns,
            network_allow_list: false,
            clean_env: true,
            workspace: true,
        }
    }

    fn refuse_unenforceable(&self, req: &ExecRequest) -> Option<ExecOutcome> {
        let mut findings: Vec<Finding> = match self.capabilities().check(&req.spec) {
            Ok(()) => Vec::new(),
            Err(missing) => missing
                .iter()
                .map(|m| {
                    Finding::new(
                        LayerName::Executor,
                        "sandbox.unenforceable",
                        Severity::High,
                        m.to_string(),
                    )
                })
                .collect(),
        };
        let host_why = [
            self.host.namespaces.as_ref().err().cloned(),
            match &self.host.cgroups {
                CgroupMode::Unavailable(why) => Some(why.clone()),
                _ => None,
            },
        ];
        if !findings.is_empty() {
            findings.extend(
                host_why.into_iter().flatten().map(|why| {
                    Finding::new(LayerName::Executor, "sandbox.host", Severity::High, why)
                }),
            );
        }
        if req.spec.uid == 0 || req.spec.gid == 0 {
            findings.push(Finding::new(
                LayerName::Executor,
                "sandbox.root",
                Severity::High,
                "the sandbox never runs a skill as uid or gid 0",
            ));
        }
        (!findings.is_empty()).then(|| ExecOutcome::rejected(Status::Error, findings))
    }

    fn seccomp_filter(
        &self,
        req: &ExecRequest,
    ) -> Result<Option<Vec<Vec<libc::sock_filter>>>, ExecError> {
        let program = if let Some(f) = req.extensions.get::<SeccompFilter>() {
            Some(f.0.as_ref().clone())
        } else if let Some(profile) = &req.spec.seccomp {
            let compiler = self.seccomp_compiler.as_ref().ok_or_else(|| {
                ExecError::Other(format!(
                    "the spec asks for seccomp profile `{}` but no compiled filter was attached \
                     and no compiler is configured (NativeSandbox::with_seccomp_compiler)",
                    profile.name
                ))
            })?;
            Some(compiler(profile).map_err(|e| {
                ExecError::Other(format!("compiling seccomp profile `{}`: {e}", profile.name))
            })?)
        } else {
            None
        };
        Ok(program.map(|stack| {
            stack
                .iter()
                .map(|p| {
                    p.iter()
                        .map(|i| libc::sock_filter {
                            code: i.code,
                            jt: i.jt,
                            jf: i.jf,
                            k: i.k,
                        })
                        .collect()
                })
                .collect()
        }))
    }

    #[cfg(test)]
    fn run_blocking(&self, req: &ExecRequest) -> Result<ExecOutcome, ExecError> {
        self.run_cancellable(req, &cancel::RunCancel::default())
    }

    /// Runs `req`; cancelling `run` kills the sandbox, and the run ends as cancelled.
    fn run_cancellable(
        &self,
        req: &ExecRequest,
        run: &cancel::RunCancel,
    ) -> Result<ExecOutcome, ExecError> {
        if let Some(refused) = self.refuse_unenforceable(req) {
            return Ok(refused);
        }
        if cancel::cancelled() || run.is_cancelled() {
            let mut outcome = ExecOutcome::default();
            cancel::mark(&mut outcome);
            return Ok(outcome);
        }
        let skill = &req.skill;
        let limits = req.spec.limits;
        let interp = crate::interpreter::for_run(
            req,
            self.interpreters.get(&skill.language).map(PathBuf::as_path),
        )?;
        let begun = Instant::now();
        let seccomp = with_file_size_filter(self.seccomp_filter(req)?);
        let stdin_bytes = serde_json::to_vec(&req.input)
            .map_err(|e| ExecError::Other(format!("serializing the input: {e}")))?;

        let pipe = || {
            rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
                .map_err(|e| ExecError::io("creating a pipe", e.into()))
        };
        let (stdin_r, stdin_w) = pipe()?;
        let (stdout_r, stdout_w) = pipe()?;
        let (stderr_r, stderr_w) = pipe()?;
        let (status_r, status_w) = pipe()?;
        let (sync_r, sync_w) = pipe()?;
        // Skills reopen their stdio through /dev/stdin (/proc/self/fd/0), which checks the
        // pipe's owner: make the skill's ends its own.
        let owner = (
            rustix::process::Uid::from_raw(self.host_id_base.saturating_add(req.spec.uid)),
            rustix::process::Gid::from_raw(self.host_id_base.saturating_add(req.spec.gid)),
        );
        for fd in [&stdin_r, &stdout_w, &stderr_w] {
            rustix::fs::fchown(fd, Some(owner.0), Some(owner.1))
                .map_err(|e| ExecError::io("handing the skill its stdio pipes", e.into()))?;
        }
        let fds = plan::ChildFds {
            stdin: stdin_r.as_raw_fd(),
            stdout: stdout_w.as_raw_fd(),
            stderr: stderr_w.as_raw_fd(),
            status: status_w.as_raw_fd(),
            sync: sync_r.as_raw_fd(),
        };
        let mut env = req.spec.env.clone();
        env.insert(OUTPUT_DIR_ENV.into(), layout::OUT_DIR.into());
        env.insert("HOME".into(), layout::WORK_DIR.into());
        env.insert("TMPDIR".into(), "/tmp".into());
        let cgroup = RunCgroup::create(&self.host.cgroups, limits.memory_bytes, limits.pids)?;
        let mut plan = layout::build(&layout::Inputs {
            skill,
            interp: &interp,
            spec: &req.spec,
            env: &env,
            host_uid: self.host_id_base.saturating_add(req.spec.uid),
            host_gid: self.host_id_base.saturating_add(req.spec.gid),
            landlock_abi: self.host.landlock_abi,
            cap_last_cap: self.host.cap_last_cap,
            seccomp,
            fds,
        })?;
        // The plan checked the workspace; its tree becomes the sandbox user's.
        if let Some(ws) = &req.spec.workspace {
            crate::workspace::hand_over(&ws.host, owner.0.as_raw(), owner.1.as_raw())?;
        }
        plan.cgroup_join = cgroup.init_join_fds();
        plan.skill_cgroup_join = cgroup.skill_join_fd();

        let started = Instant::now();
        plan.deadline = child::monotonic_after(limits.wall_timeout);
        plan.host_args = host_args();
        let pid = child::spawn(&plan).map_err(|e| {
            if e.raw_os_error() == Some(libc::EPERM) {
                ExecError::HostUnsupported(format!(
                    "creating mount and pid namespaces was refused ({e}): the native sandbox \
                     needs root with CAP_SYS_ADMIN; in a container, allow unshare/clone \
                     (e.g. docker --privileged or a seccomp profile that permits namespaces)"
                ))
            } else {
                ExecError::io("starting the sandbox", e)
            }
        })?;
        let init = InitGuard { pid };
        drop((stdin_r, stdout_w, stderr_w, status_w, sync_r));

        cgroup.place(pid)?;
        let (msg_tx, msg_rx) = mpsc::channel();
        let registered = cancel::Registered::new(msg_tx.clone(), run);
        let mut status_file = File::from(status_r);
        std::thread::spawn(move || {
            let mut buf = [0u8; MSG_LEN];
            while status_file.read_exact(&mut buf).is_ok() {
                if msg_tx.send(Msg::from_bytes(&buf)).is_err() {
                    return;
                }
            }
            let _ = msg_tx.send(Msg {
                kind: cancel::MSG_GONE,
                ..Msg::default()
            });
        });
        let deadline = started + limits.wall_timeout;
        let recv = |rx: &mpsc::Receiver<Msg>| {
            rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        };
        let ready_msg = recv(&msg_rx);
        let proc_view = match ready_msg {
            Ok(m) if m.kind == MSG_READY => ProcView::from_code(m.a),
            Ok(m) if m.kind == MSG_EXEC_FAILED || m.kind == MSG_SETUP_FAILED => {
                return ended_in_setup(init, &cgroup, &limits, SetupEnd::Failed(m));
            }
            Ok(m) if m.kind == cancel::MSG_CANCEL => {
                return ended_in_setup(init, &cgroup, &limits, SetupEnd::Cancelled);
            }
            Ok(_) => return ended_in_setup(init, &cgroup, &limits, SetupEnd::Died),
            Err(_) => return ended_in_setup(init, &cgroup, &limits, SetupEnd::TimedOut),
        };
        let ready = Instant::now();
        // On v1 the init joined its cgroups before reporting ready: make sure it did.
        cgroup.confirm(pid)?;
        write_id_maps(pid, self.host_id_base, req.spec.uid, req.spec.gid)?;
        let mut sync = File::from(sync_w);
        sync.write_all(&[1])
            .map_err(|e| ExecError::io("releasing the sandbox's init", e))?;

        let released = Instant::now();
        let writer = feed_stdin(File::from(stdin_w), stdin_bytes);
        let captures = Captures::start(File::from(stdout_r), File::from(stderr_r), &limits);

        let mut stopped = None;
        let mut exec_failure: Option<Msg> = None;
        let mut ended: Option<Waited> = None;
        loop {
            match recv(&msg_rx) {
                Ok(m) if m.kind == MSG_DONE => {
                    ended = Some(reported_end(&m));
                    if m.c == 1 {
                        // The init's own wall clock fired before the host's.
                        stopped = Some(Stop::TimedOut);
                    }
                    break;
                }
                Ok(m) if m.kind == MSG_EXEC_FAILED || m.kind == MSG_SETUP_FAILED => {
                    exec_failure = Some(m);
                }
                Ok(m) if m.kind == cancel::MSG_CANCEL => {
                    stopped = Some(Stop::Cancelled);
                    break;
                }
                Ok(m) if m.kind == cancel::MSG_GONE => {
                    stopped = Some(Stop::InitDied);
                    break;
                }
                Ok(_) => {}
                Err(_) => {
                    stopped = Some(Stop::TimedOut);
                    break;
                }
            }
        }
        drop(registered);
        let ended_at = Instant::now();
        let remains = Remains { init, sync, cgroup };
        let (artifacts, mut artifact_findings, end, events) = match ended {
            Some(end) => {
                let out = PathBuf::from(format!("/proc/{pid}/root{}", layout::OUT_DIR));
                let (artifacts, findings) =
                    artifacts::collect(&out, limits.artifact_file_cap, limits.artifact_total_cap);
                // Every process but the init is gone, so the limit events are final. The
                // rest (killing and reaping the init, the kernel's namespace teardown,
                // removing the cgroup) happens after the outcome is returned.
                let events = remains.cgroup.events();
                self.teardowns.defer(move || {
                    if let Err(e) = remains.end().0 {
                        tracing::warn!("reaping a finished sandbox's init: {e}");
                    }
                });
                (artifacts, findings, end, events)
            }
            None => {
                // Timed out, cancelled, or the init died: the skill was killed with the
                // init, and the init's own usage includes the skill's.
                let (waited, events) = remains.end();
                let w = waited.map_err(|e| ExecError::io("waiting for the sandbox", e))?;
                let init_signal = w.signal;
                let killed = Waited {
                    exit_code: None,
                    signal: Some(libc::SIGKILL),
                    ..w
                };
                if stopped == Some(Stop::InitDied) {
                    // Report how the init itself ended, in the finding below.
                    stopped = Some(Stop::InitEnded(init_signal.unwrap_or(0)));
                }
                (Vec::new(), Vec::new(), killed, events)
            }
        };
        let wall = started.elapsed();
        let (stdout, stdout_truncated, stderr, stderr_truncated) = captures.finish();
        if let Some(writer) = writer {
            let _ = writer.join();
        }
        if let Some(e) = exec_failure {
            return too_little_memory(&events, &limits, e.b).ok_or_else(|| setup_error(e));
        }
        let res = ProcessResult {
            exit_code: end.exit_code,
            signal: end.signal,
            stdout,
            stderr,
            stdout_truncated,
            stderr_truncated,
            timed_out: stopped == Some(Stop::TimedOut),
            usage: ResourceUsage {
                wall,
                user_cpu: end.user_cpu,
                system_cpu: end.system_cpu,
                max_rss_bytes: events.peak_memory.max(end.max_rss_bytes),
            },
        };
        let mut outcome = outcome_from(res, &limits);
        match stopped {
            Some(Stop::Cancelled) => cancel::mark(&mut outcome),
            Some(Stop::InitEnded(signal)) => init_died(&mut outcome, signal, &events),
            _ => {}
        }
        apply_limit_events(&mut outcome, &events, &limits);
        outcome.artifacts = artifacts;
        outcome.findings.append(&mut artifact_findings);
        let us = |a: Instant, b: Instant| (b - a).as_micros();
        tracing::debug!(
            target: "skillgate_sandbox::timing",
            prepare_us = us(begun, started),
            start_us = us(started, ready),
            release_us = us(ready, released),
            skill_us = us(released, ended_at),
            collect_us = us(ended_at, Instant::now()),
            "native sandbox run"
        );
        // Which enforcement this run actually had (cgroup v1 or v2, landlock ABI and
        // scopes, what /proc showed).
        outcome.findings.push(Finding::new(
            LayerName::Executor,
            "sandbox.enforcement",
            Severity::Info,
            format!(
                "{}; signals: {}; /proc: {}",
                self.host.describe(),
                if self.host.landlock_abi >= Some(6) {
                    "own sandbox only (own session; landlock signal scope)"
                } else {
                    "own session (no landlock signal scope on this kernel)"
                },
                proc_view.describe()
            ),
        ));
        Ok(outcome)
    }
}

/// Why the host stopped waiting for a running skill before the init reported its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// The wall clock ran out (the host's, or the init's own).
    TimedOut,
    /// [`cancel_runs`] was called.
    Cancelled,
    /// The init's status pipe closed without a report.
    InitDied,
    /// ... and the init, reaped, had ended by this signal (0: it exited).
    InitEnded(i32),
}

/// How a sandbox ended before it was ready to run the skill.
enum SetupEnd {
    /// The init reported a failed step.
    Failed(Msg),
    /// The init ended without a word.
    Died,
    /// The wall clock ran out first.
    TimedOut,
    /// [`cancel_runs`] was called.
    Cancelled,
}

/// The outcome (or error) of a run whose sandbox ended during its setup. A limit that ran
/// out (the wall clock; a memory limit too small for the sandbox itself, seen in the
/// cgroup's events) is the run's status, naming the limit, as if the skill had hit it;
/// anything else is an error of the host.
fn ended_in_setup(
    init: InitGuard,
    cgroup: &RunCgroup,
    limits: &skillgate_core::Limits,
    how: SetupEnd,
) -> Result<ExecOutcome, ExecError> {
    cgroup.kill_all();
    let waited = init.reap();
    let events = cgroup.events();
    let finding =
        |rule: &str, msg: String| Finding::new(LayerName::Executor, rule, Severity::High, msg);
    if let SetupEnd::Cancelled = how {
        let mut outcome = ExecOutcome::default();
        cancel::mark(&mut outcome);
        return Ok(outcome);
    }
    if let SetupEnd::TimedOut = how {
        return Ok(ExecOutcome::rejected(
            Status::Timeout,
            vec![finding(
                "limit.wall_timeout",
                format!(
                    "the {} wall-clock limit ran out while the sandbox was being set up, \
                     before the skill started",
                    units::format_duration(limits.wall_timeout)
                ),
            )],
        ));
    }
    let errno = match &how {
        SetupEnd::Failed(m) => m.b,
        _ => 0,
    };
    if let Some(outcome) = too_little_memory(&events, limits, errno) {
        return Ok(outcome);
    }
    Err(match how {
        SetupEnd::Failed(m) => setup_error(m),
        _ => ExecError::Other(format!(
            "the sandbox's init ended during setup ({})",
            match waited {
                Ok(Waited {
                    signal: Some(s), ..
                }) => format!("killed by signal {s}"),
                Ok(Waited {
                    exit_code: Some(c), ..
                }) => format!("exit code {c}"),
                Ok(_) => "no status".into(),
                Err(e) => format!("not reaped: {e}"),
            }
        )),
    })
}

/// When the sandbox failed before the skill started and the run's cgroup saw its memory
/// limit hit, or the failed step (`errno`, 0 if none) could not allocate: the outcome
/// saying the limit is too small. (A kernel allocation refused under the cgroup's limit
/// is not always counted in its events.)
fn too_little_memory(
    ev: &LimitEvents,
    limits: &skillgate_core::Limits,
    errno: i32,
) -> Option<ExecOutcome> {
    (ev.oom_kills > 0 || ev.memory_max_hits > 0 || errno == libc::ENOMEM).then(|| {
        ExecOutcome::rejected(
            Status::ResourceExhausted,
            vec![Finding::new(
                LayerName::Executor,
                "limit.memory",
                Severity::High,
                format!(
                    "the {} memory limit is too small to start the sandbox and its \
                     interpreter; the skill never started",
                    units::format_size(limits.memory_bytes)
                ),
            )],
        )
    })
}

/// Makes `outcome` say the sandbox's init died before reporting how the skill ended,
/// with what the run's cgroup saw ([`apply_limit_events`] then names a limit it hit).
fn init_died(outcome: &mut ExecOutcome, signal: i32, ev: &LimitEvents) {
    outcome.status = Status::Error;
    let how = if signal > 0 {
        format!("was killed by signal {signal}")
    } else {
        "exited".into()
    };
    outcome.findings.push(Finding::new(
        LayerName::Executor,
        "sandbox.init_died",
        Severity::High,
        format!(
            "the sandbox's init {how} before reporting how the skill ended; the run's cgroup \
             recorded {} out-of-memory kill(s), {} hit(s) of the memory limit and {} refused \
             fork(s)",
            ev.oom_kills, ev.memory_max_hits, ev.pids_max_hits
        ),
    ));
}

/// The host's command-line area (start, length), read once from `/proc/self/stat`
/// (fields 48 and 49), for the init to blank.
fn host_args() -> Option<(usize, usize)> {
    static AREA: std::sync::OnceLock<Option<(usize, usize)>> = std::sync::OnceLock::new();
    *AREA.get_or_init(|| {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        let after_comm = &stat[stat.rfind(')')? + 1..];
        // Field 3 is the first after the command name.
        let mut fields = after_comm.split_whitespace().skip(48 - 3);
        let start: usize = fields.next()?.parse().ok()?;
        let end: usize = fields.next()?.parse().ok()?;
        (end > start).then(|| (start, end - start))
    })
}

/// Puts the sandbox's own filter first in the seccomp stack: `rt_sigaction` on SIGXFSZ
/// succeeds without effect, so the signal keeps its default action and a process writing
/// past the file-size limit dies by it (mapped to `resource_exhausted`), even under an
/// interpreter that ignores it (CPython does) or a skill that catches it. Without a
/// filter for this architecture, the stack is left as it is.
fn with_file_size_filter(
    stack: Option<Vec<Vec<libc::sock_filter>>>,
) -> Option<Vec<Vec<libc::sock_filter>>> {
    static FILTER: std::sync::OnceLock<Option<Vec<libc::sock_filter>>> = std::sync::OnceLock::new();
    let Some(own) = FILTER.get_or_init(file_size_filter) else {
        return stack;
    };
    let mut all = vec![own.clone()];
    all.extend(stack.unwrap_or_default());
    Some(all)
}

/// Compiles the filter of [`with_file_size_filter`].
fn file_size_filter() -> Option<Vec<libc::sock_filter>> {
    use seccompiler::{SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition};
    let arch = std::env::consts::ARCH.try_into().ok()?;
    let rule = seccompiler::SeccompRule::new(vec![
        SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            libc::SIGXFSZ as u64,
        )
        .ok()?,
        // A new action (not a query of the current one, which passes).
        SeccompCondition::new(1, SeccompCmpArgLen::Qword, SeccompCmpOp::Ne, 0).ok()?,
    ])
    .ok()?;
    let filter = seccompiler::SeccompFilter::new(
        [(libc::SYS_rt_sigaction, vec![rule])].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(0),
        arch,
    )
    .ok()?;
    let program: seccompiler::BpfProgram = filter.try_into().ok()?;
    Some(
        program
            .iter()
            .map(|i| libc::sock_filter {
                code: i.code,
                jt: i.jt,
                jf: i.jf,
                k: i.k,
            })
            .collect(),
    )
}

/// What is left of a run once the skill has ended or timed out: its init (alive until the
/// sync pipe closes, keeping `/out` readable) and the cgroup.
struct Remains {
    // Field order is drop order: the init is killed and reaped before its cgroup goes.
    init: InitGuard,
    sync: File,
    cgroup: RunCgroup,
}

impl Remains {
    /// Kills the init, which kills every process of the sandbox's pid namespace, reaps it
    /// (its usage and the cgroup's limit events are returned), and removes the cgroup.
    fn end(self) -> (std::io::Result<Waited>, LimitEvents) {
        let Remains { init, sync, cgroup } = self;
        cgroup.kill_all();
        drop(sync);
        let waited = init.reap();
        let events = cgroup.events();
        drop(cgroup);
        (waited, events)
    }
}

/// Teardowns of finished runs, done after their outcomes were returned. Dropping the last
/// clone of the sandbox waits for them, so no init or cgroup outlives it.
#[derive(Default)]
struct Teardowns(std::sync::Mutex<Vec<JoinHandle<()>>>);

impl Teardowns {
    /// Runs `teardown` on a thread of its own. When no thread can be had, the closure is
    /// dropped unrun, here and now: what it owns must clean up when dropped ([`Remains`]
    /// does, through [`InitGuard`] and the cgroup's `Drop`).
    fn defer(&self, teardown: impl FnOnce() + Send + 'static) {
        let spawned = std::thread::Builder::new()
            .name("sandbox-teardown".into())
            .spawn(teardown);
        let mut pending = self.0.lock().unwrap_or_else(|p| p.into_inner());
        pending.retain(|h| !h.is_finished());
        if let Ok(handle) = spawned {
            pending.push(handle);
        }
    }
}

impl Drop for Teardowns {
    fn drop(&mut self) {
        let pending = self.0.get_mut().unwrap_or_else(|p| p.into_inner());
        for handle in pending.drain(..) {
            let _ = handle.join();
        }
    }
}

/// Writes the skill's input to its stdin and closes it. An input that fits in a pipe's
/// atomic size goes in at once (a new pipe always takes that much without blocking); a
/// larger one is fed by a thread while the skill reads, joined through the handle.
fn feed_stdin(mut stdin: File, input: Vec<u8>) -> Option<JoinHandle<()>> {
    // A skill that never reads its stdin closes the pipe: EPIPE is not our failure.
    if input.len() <= libc::PIPE_BUF {
        let _ = stdin.write_all(&input);
        return None;
    }
    Some(std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    }))
}

/// Kills the init (and so the whole sandbox) if the run is abandoned by an early return.
struct InitGuard {
    pid: i32,
}

impl InitGuard {
    fn kill(&self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.pid) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }

    /// Kills the init and reaps it, returning how it ended and what it (with everything
    /// it reaped) used.
    fn reap(self) -> std::io::Result<Waited> {
        self.kill();
        let waited = crate::reap::wait4(self.pid);
        std::mem::forget(self);
        waited
    }
}

impl Drop for InitGuard {
    fn drop(&mut self) {
        self.kill();
        let _ = crate::reap::wait4(self.pid);
    }
}

/// How the skill ended and what it used, as the init reported them with [`MSG_DONE`].
fn reported_end(m: &Msg) -> Waited {
    let [user, system, rss_kib] = m.usage.map(|v| u64::try_from(v).unwrap_or(0));
    Waited {
        exit_code: (m.a >= 0).then_some(m.a),
        signal: (m.b > 0).then_some(m.b),
        user_cpu: Duration::from_micros(user),
        system_cpu: Duration::from_micros(system),
        max_rss_bytes: rss_kib.saturating_mul(1024),
    }
}

fn write_id_maps(pid: i32, base: u32, uid: u32, gid: u32) -> Result<(), ExecError> {
    let w = |file: &str, inside: u32| {
        let path = format!("/proc/{pid}/{file}");
        let map = format!("0 {base} 1\n{inside} {} 1\n", base.saturating_add(inside));
        std::fs::write(&path, map).map_err(|e| {
            ExecError::HostUnsupported(format!(
                "writing {path} failed ({e}): the host refuses the sandbox's id mapping; \
                 skillgate must run as root (CAP_SETUID and CAP_SETGID in the host's user \
                 namespace)"
            ))
        })
    };
    w("uid_map", uid)?;
    w("gid_map", gid)
}

fn setup_error(m: Msg) -> ExecError {
    let err = std::io::Error::from_raw_os_error(m.b);
    let what = Stage::describe(m.a);
    let step = if m.c >= 0 {
        format!(" (step {})", m.c)
    } else {
        String::new()
    };
    if m.kind == MSG_SETUP_FAILED
        && (m.a == Stage::UnshareUser as i32 || m.a == Stage::UnshareRest as i32)
    {
        return ExecError::HostUnsupported(format!(
            "{what} failed: {err}. User namespaces are off or restricted on this host: check \
             sysctl user.max_user_namespaces (> 0), kernel.unprivileged_userns_clone (= 1 on \
             Debian/Ubuntu kernels), kernel.apparmor_restrict_unprivileged_userns (= 0, or an \
             AppArmor profile allowing `userns`), and a container runtime's seccomp profile \
             (it must allow unshare and clone with namespace flags)"
        ));
    }
    ExecError::Other(format!("sandbox setup failed while {what}{step}: {err}"))
}

/// Turns what the cgroup saw into a status: an OOM kill or a refused fork is
/// `resource_exhausted`, whatever the skill's exit code.
fn apply_limit_events(
    outcome: &mut ExecOutcome,
    ev: &LimitEvents,
    limits: &skillgate_core::Limits,
) {
    if outcome.status == Status::Timeout {
        return;
    }
    let finding =
        |rule: &str, msg: String| Finding::new(LayerName::Executor, rule, Severity::High, msg);
    if ev.oom_kills > 0 {
        outcome.status = Status::ResourceExhausted;
        outcome.findings.push(finding(
            "limit.memory",
            format!(
                "killed by the out-of-memory killer at the {} memory limit",
                units::format_size(limits.memory_bytes)
            ),
        ));
    } else if ev.pids_max_hits > 0 {
        outcome.status = Status::ResourceExhausted;
        outcome.findings.push(finding(
            "limit.pids",
            format!(
                "tried to start more than {} processes or threads",
                limits.pids
            ),
        ));
    }
}

impl tower::Service<ExecRequest> for NativeSandbox {
    type Response = ExecOutcome;
    type Error = BoxError;
    type Future = crate::blocking::ExecFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    /// Dropping the returned future before the run is done kills the sandbox (the run
    /// itself goes on on the blocking pool until then).
    fn call(&mut self, req: ExecRequest) -> Self::Future {
        let this = self.clone();
        let run = cancel::RunCancel::default();
        let on_drop = cancel::CancelOnDrop(run.clone());
        let work = crate::blocking::on_blocking_pool(move || this.run_cancellable(&req, &run));
        Box::pin(async move {
            let _on_drop = on_drop;
            work.await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn print_one() -> ExecRequest {
        let skill =
            skillgate_core::Skill::builder("s", Language::Python, b"print(1)".to_vec()).build();
        ExecRequest::new(
            skillgate_core::Caller::new("a", "t"),
            skill,
            serde_json::json!({}),
        )
    }

    fn sandbox_on(host: HostSupport) -> NativeSandbox {
        NativeSandbox {
            host: Arc::new(host),
            ..NativeSandbox::new()
        }
    }

    #[test]
    fn the_reported_end_keeps_only_meaningful_values() {
        let exited = reported_end(&Msg {
            kind: MSG_DONE,
            a: 3,
            usage: [1_500, 250, 2_048],
            ..Msg::default()
        });
        assert_eq!((exited.exit_code, exited.signal), (Some(3), None));
        assert_eq!(exited.user_cpu, Duration::from_micros(1_500));
        assert_eq!(exited.system_cpu, Duration::from_micros(250));
        assert_eq!(exited.max_rss_bytes, 2 << 20);
        let killed = reported_end(&Msg {
            kind: MSG_DONE,
            a: -1,
            b: libc::SIGSYS,
            usage: [-1, 0, -5],
            ..Msg::default()
        });
        assert_eq!(
            (killed.exit_code, killed.signal),
            (None, Some(libc::SIGSYS))
        );
        assert_eq!((killed.user_cpu, killed.max_rss_bytes), (Duration::ZERO, 0));
    }

    #[test]
    fn a_refused_user_namespace_names_the_settings_to_check() {
        let e = setup_error(Msg {
            kind: MSG_SETUP_FAILED,
            a: Stage::UnshareUser as i32,
            b: libc::EPERM,
            c: -1,
            ..Msg::default()
        })
        .to_string();
        assert!(e.contains("user.max_user_namespaces"), "{e}");
        assert!(e.contains("apparmor_restrict_unprivileged_userns"), "{e}");
        let e = setup_error(Msg {
            kind: MSG_EXEC_FAILED,
            a: Stage::Exec as i32,
            b: libc::ENOENT,
            c: -1,
            ..Msg::default()
        })
        .to_string();
        assert!(e.contains("executing the interpreter"), "{e}");
    }

    #[test]
    fn without_cgroups_memory_and_pids_specs_are_refused_before_running() {
        let sb = sandbox_on(HostSupport {
            cgroups: CgroupMode::Unavailable("no cgroups here".into()),
            landlock_abi: None,
            namespaces: Ok(()),
            cap_last_cap: 40,
        });
        let caps = sb.capabilities();
        assert!(!caps.memory && !caps.pids && caps.network_none);
        let req = print_one();
        let out = sb.run_blocking(&req).unwrap();
        assert_eq!(out.status, Status::Error);
        let text: Vec<&str> = out.findings.iter().map(|f| f.message.as_str()).collect();
        assert!(text.iter().any(|m| m.contains("memory")), "{text:?}");
        assert!(
            text.iter().any(|m| m.contains("no cgroups here")),
            "{text:?}"
        );
    }

    #[test]
    fn without_namespaces_the_tier_drops_and_the_run_is_refused() {
        let sb = sandbox_on(HostSupport {
            cgroups: CgroupMode::Unavailable("none".into()),
            landlock_abi: None,
            namespaces: Err("user namespaces are disabled".into()),
            cap_last_cap: 40,
        });
        assert_eq!(sb.capabilities().tier, RuntimeTier::Process);
        let req = print_one();
        let out = sb.run_blocking(&req).unwrap();
        assert_eq!(out.status, Status::Error);
        assert!(out.stdout.is_empty());
        assert!(
            out.findings
                .iter()
                .any(|f| f.message.contains("user namespaces are disabled"))
        );
    }
}
