//! The OCI-runtime executor: one OCI bundle per run, under `runc`, gVisor's `runsc` or
//! `crun`, with no daemon.
//!
//! A run writes a bundle (see [`bundle`]: a `config.json` built from the spec, its
//! `/etc`, and a shared read-only root made once under the state root), mounts a
//! size-capped tmpfs for `/out` on the host, and starts `RUNTIME run --bundle B ID` with
//! stdin, stdout and stderr as three separate pipes (the runtime hands them to the
//! skill). The input is written to stdin, which is then closed; stdout and stderr are
//! read concurrently, each kept up to its cap and the rest drained. At the wall-clock
//! deadline the container is killed (`RUNTIME kill ID KILL`). After it ends, the host
//! reads what the cgroup saw (runc and crun keep the stopped container for that:
//! `run --keep`) and collects `/out` with the sandbox's own collector. The run's watcher
//! process then deletes the container (`delete --force`), unmounts `/out` and removes the
//! bundle, after the outcome is returned, and on every other path too: a dropped future,
//! a step that failed, the death of this process (see [`container`]).
//!
//! How a run ends:
//! - out of memory: runc and crun read the cgroup's own counter (`oom_kill` in v1
//!   `memory.oom_control` or v2 `memory.events`); under gVisor the cgroup is gone when
//!   `runsc run` returns, so there a SIGKILL the executor did not send (it was not the
//!   deadline) is taken as the memory limit's (every container has one);
//! - pids: runc and crun read the cgroup's `pids.events` (forks refused at the limit):
//!   `resource_exhausted`; under gVisor forks past the limit are refused all the same,
//!   but not reported;
//! - the deadline: `timeout`; a seccomp kill (SIGSYS): `security_violation` (runc and
//!   crun; gVisor's runsc cannot load a kill action, so such a profile is refused).
//!
//! `crun` is refused on a host whose cgroups are hybrid (v1 controllers plus controllers
//! on the v2 mount): it cannot run there ("cgroups in hybrid mode not supported").
pub mod bundle;
mod container;

use crate::capture::Capture;
use crate::limits::read_key;
use crate::run_dir::{open_to_container, program_in_container};
use bundle::{BundlePlan, SKILL_DIR, covered_by_system_dirs};
use container::Container;
use skillgate_core::{
    BoxError, Capabilities, ExecError, ExecOutcome, ExecRequest, Language, LayerName, RuntimeTier,
    SeccompProfile,
};
use skillgate_sandbox::supervisor::ProcessResult;
use skillgate_sandbox::workdir::WorkDir;
use std::future::Future;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::sync::Mutex;

/// The default state root: the runtimes' container state and the shared root.
pub const DEFAULT_STATE_ROOT: &str = "/run/skillgate-oci";
/// How long a runtime command outside the run itself (kill, delete) may take.
pub const RUNTIME_CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long stdout and stderr are still read after the container ended.
const DRAIN_GRACE: Duration = Duration::from_secs(1);
pub use crate::limits::runsc_host_pids;
/// The cgroup parent of every run's container (`/skillgate/<container id>`).
pub const CGROUP_PARENT: &str = "/skillgate";

/// Which OCI runtime runs the bundles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuntimeKind {
    /// `runc`, the reference runtime.
    Runc,
    /// gVisor's `runsc`: a user-space kernel between the skill and the host.
    Runsc,
    /// `crun` (only where the host's cgroups are not hybrid).
    Crun,
}

impl RuntimeKind {
    /// The kind of the runtime binary `path`, from its file name (`runc`, `runsc`,
    /// `crun`, optionally with a suffix such as `runsc-20240729`).
    pub fn of(path: &Path) -> Option<RuntimeKind> {
        let name = path.file_name()?.to_str()?;
        let base = name.split(['-', '.']).next().unwrap_or(name);
        match base {
            "runc" => Some(RuntimeKind::Runc),
            "runsc" => Some(RuntimeKind::Runsc),
            "crun" => Some(RuntimeKind::Crun),
            _ => None,
        }
    }

    /// `runc`, `runsc` or `crun`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuntimeKind::Runc => "runc",
            RuntimeKind::Runsc => "runsc",
            RuntimeKind::Crun => "crun",
        }
    }
}

/// Which runtime, and where its state lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciSettings {
    /// The runtime: `runc`, `runsc` or `crun`, a command name looked up in `PATH` (and
    /// `/usr/sbin`, `/usr/bin`, `/sbin`) or a path; its kind comes from the file name.
    pub runtime: PathBuf,
    /// The state root ([`DEFAULT_STATE_ROOT`]): the runtime's `--root` and the shared
    /// read-only root of every bundle.
    pub state_root: PathBuf,
}

impl OciSettings {
    /// Settings for `runtime` under the default state root.
    pub fn new(runtime: impl Into<PathBuf>) -> Self {
        OciSettings {
            runtime: runtime.into(),
            state_root: DEFAULT_STATE_ROOT.into(),
        }
    }
}

/// The runtime binary, its kind and its state.
#[derive(Debug)]
pub(crate) struct Runtime {
    pub(crate) binary: PathBuf,
    pub(crate) kind: RuntimeKind,
    /// The runtime's `--root`.
    state: PathBuf,
    /// The shared read-only root of the bundles.
    rootfs: PathBuf,
}

impl Runtime {
    /// The arguments before the command: its state root, and for gVisor no network of
    /// its own (the container's namespace has only loopback), the OCI seccomp profile
    /// loaded inside the sandbox (runsc ignores it otherwise) and the ptrace platform
    /// (KVM hangs on hosts without nested virtualisation; systrap is newer than
    /// Debian 12's runsc).
    pub(crate) fn global_args(&self) -> Vec<String> {
        let mut args = vec!["--root".to_string(), self.state.display().to_string()];
        if self.kind == RuntimeKind::Runsc {
            args.extend(["--network=none", "--oci-seccomp", "--platform=ptrace"].map(String::from));
        }
        args
    }
}

/// The OCI-runtime executor (see the [module](self) documentation).
#[derive(Debug, Clone)]
pub struct OciExecutor {
    runtime: Arc<Runtime>,
    /// Interpreters for skills without a runtime, per language (default: on `PATH`).
    interpreters: Arc<std::collections::HashMap<Language, PathBuf>>,
}

/// Finds `name` in `PATH` and the system folders where Debian installs the runtimes.
fn find_binary(name: &Path) -> Option<PathBuf> {
    if name.components().count() > 1 {
        return name.is_file().then(|| name.to_path_buf());
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain(["/usr/sbin".into(), "/usr/bin".into(), "/sbin".into()])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Why crun cannot run on this host, when it cannot: cgroup v1 controllers mounted and
/// controllers on the v2 mount too (a hybrid setup crun rejects).
pub fn crun_refusal(cgroup_root: &Path) -> Option<String> {
    let unified =
        std::fs::read_to_string(cgroup_root.join("unified/cgroup.controllers")).unwrap_or_default();
    let v1 = cgroup_root.join("memory").is_dir() || cgroup_root.join("pids").is_dir();
    (v1 && !unified.trim().is_empty()).then(|| {
        format!(
            "crun cannot run on this host: its cgroups are hybrid (v1 controllers, and `{}` on \
             the v2 mount at {}), which crun rejects (\"cgroups in hybrid mode not \
             supported\"); use runtime = \"runc\" or \"runsc\"",
            unified.trim(),
            cgroup_root.join("unified").display()
        )
    })
}

impl OciExecutor {
    /// An executor for the settings' runtime: the binary must exist and be one of runc,
    /// runsc or crun (crun only on a host whose cgroups it supports); the state root and
    /// the shared read-only root are made.
    pub fn new(settings: OciSettings) -> Result<OciExecutor, ExecError> {
        let binary = find_binary(&settings.runtime).ok_or_else(|| {
            ExecError::Other(format!(
                "OCI runtime `{}` is not installed (apt-get install runc runsc; or set \
                 [executor] runtime to its path)",
                settings.runtime.display()
            ))
        })?;
        let kind = RuntimeKind::of(&binary).ok_or_else(|| {
            ExecError::Other(format!(
                "OCI runtime {}: not runc, runsc or crun (the executor passes each its own \
                 flags, so it must know which it is)",
                binary.display()
            ))
        })?;
        if kind == RuntimeKind::Crun {
            if let Some(why) = crun_refusal(Path::new("/sys/fs/cgroup")) {
                return Err(ExecError::HostUnsupported(why));
            }
        }
        let state = settings.state_root.join(kind.as_str());
        let rootfs = settings.state_root.join("rootfs");
        std::fs::create_dir_all(&state).map_err(|e| {
            ExecError::io(
                format!("creating the OCI state root {}", state.display()),
                e,
            )
        })?;
        // Only root walks the state root (the runtime; the skill sees the root from inside).
        std::fs::set_permissions(&settings.state_root, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| {
                ExecError::io(
                    format!(
                        "closing the OCI state root {}",
                        settings.state_root.display()
                    ),
                    e,
                )
            })?;
        bundle::prepare_root(&rootfs)?;
        Ok(OciExecutor {
            runtime: Arc::new(Runtime {
                binary,
                kind,
                state,
                rootfs,
            }),
            interpreters: Arc::default(),
        })
    }

    /// Uses `program` (a path or command name) for `language`'s skills that name no
    /// runtime; it must be visible in the container (inside the system directories, or
    /// under its prefix, which is bound read-only).
    pub fn with_interpreter(mut self, language: Language, program: impl Into<PathBuf>) -> Self {
        Arc::make_mut(&mut self.interpreters).insert(language, program.into());
        self
    }

    /// The runtime in use.
    pub fn runtime(&self) -> RuntimeKind {
        self.runtime.kind
    }

    /// What this executor enforces, the same under each runtime: the container tier
    /// (gVisor's is stronger, but the tiers do not tell them apart), every limit of the
    /// spec, the uid, seccomp and network none; not a destination allow-list. Under
    /// runsc not a seccomp kill action either (gVisor cannot load `kill_process`), so the
    /// isolation layer refuses such a profile there.
    pub fn capabilities(&self) -> Capabilities {
        Capabilities {
            executor: format!("oci ({})", self.runtime.kind.as_str()),
            tier: RuntimeTier::Container,
            wall_timeout: true,
            cpu_time: true,
            memory: true,
            pids: true,
            pids_reported: self.runtime.kind != RuntimeKind::Runsc,
            file_size: true,
            open_files: true,
            output_caps: true,
            workdir_size: true,
            user: true,
            seccomp: true,
            seccomp_kill: self.runtime.kind != RuntimeKind::Runsc,
            network_none: true,
            network_allow_list: false,
            clean_env: true,
            workspace: false,
        }
    }

    /// The containers that the runtime still knows, or whose cgroup still exists, for the
    /// request ids `ids`: the cleanup probe of the conformance kit.
    pub async fn leftovers(&self, ids: &[String]) -> Result<Vec<String>, ExecError> {
        let mut left = Vec::new();
        for id in ids {
            let cid = container_id(id);
            let state = tokio::process::Command::new(&self.runtime.binary)
                .args(self.runtime.global_args())
                .args(["state", &cid])
                .output()
                .await
                .map_err(|e| ExecError::io("asking the OCI runtime for a container's state", e))?;
            if state.status.success() {
                left.push(format!("{cid} (known to {})", self.runtime.kind.as_str()));
            }
            for controller in ["memory", "pids", "unified"] {
                let dir = cgroup_dir(controller, &cid);
                if dir.exists() {
                    left.push(format!("{cid} (cgroup {})", dir.display()));
                }
            }
        }
        Ok(left)
    }

    /// The interpreter and its arguments inside the container, the runtime tree to bind
    /// and the host paths to bind read-only.
    fn command(&self, req: &ExecRequest, entry: &str) -> Result<Command, ExecError> {
        let language = req.skill.language;
        let (program, tree, prefix) = match (&req.spec.interpreter, &req.skill.runtime) {
            (Some(r), _) => (program_in_container(r), r.tree.clone(), r.prefix.clone()),
            (None, Some(name)) => {
                return Err(ExecError::Other(format!(
                    "the skill asks for runtime `{name}` but no runtime was resolved for this \
                     run (the isolation layer resolves it: is it disabled?)"
                )));
            }
            (None, None) => {
                let explicit = self.interpreters.get(&language).map(PathBuf::as_path);
                let interp = skillgate_sandbox::Interpreter::resolve(language, explicit)?;
                (interp.program.display().to_string(), None, interp.prefix)
            }
        };
        let mut read_only: Vec<PathBuf> = std::iter::once(prefix)
            .chain(req.spec.read_only_paths.iter().cloned())
            .filter(|p| !covered_by_system_dirs(p))
            .collect();
        read_only.dedup();
        for p in &read_only {
            if !p.is_absolute() || !p.exists() {
                return Err(ExecError::Other(format!(
                    "read-only path {} is not an existing absolute path",
                    p.display()
                )));
            }
        }
        let args = std::iter::once(program)
            .chain(
                skillgate_sandbox::Interpreter::isolation_args_of(language)
                    .iter()
                    .map(|a| a.to_string()),
            )
            .chain(std::iter::once(format!("{SKILL_DIR}/{entry}")))
            .collect();
        Ok(Command {
            args,
            tree,
            read_only,
        })
    }

    /// The seccomp section of the bundle.
    fn seccomp(
        &self,
        profile: Option<&SeccompProfile>,
    ) -> Result<Option<oci_spec::runtime::LinuxSeccomp>, ExecError> {
        let Some(profile) = profile else {
            return Ok(None);
        };
        if self.runtime.kind == RuntimeKind::Runsc && profile.kills() {
            return Err(ExecError::HostUnsupported(format!(
                "gVisor (runsc) rejects the seccomp action kill_process of profile `{}` \
                 (\"invalid action: SCMP_ACT_KILL_PROCESS\"); use runtime = \"runc\", or a \
                 profile whose actions are errno",
                profile.name
            )));
        }
        let arch = skillgate_confine::Arch::native().ok_or_else(|| {
            ExecError::HostUnsupported("no seccomp support for this architecture".into())
        })?;
        skillgate_confine::oci::to_oci(profile, &[arch])
            .map(Some)
            .map_err(|e| ExecError::Other(format!("emitting the seccomp profile: {e}")))
    }

    async fn run(&self, req: ExecRequest) -> Result<ExecOutcome, ExecError> {
        let mut marks = crate::timing::Marks::start();
        let limits = req.spec.limits;
        let dir = WorkDir::prepare(&req.skill)?;
        open_to_container(&dir)?;
        let entry = dir
            .entry()
            .strip_prefix(dir.work())
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| req.skill.entry.clone());
        let cid = container_id(&req.id.to_string());
        let mut container = Container::new(&self.runtime, &cid, dir)?;
        let Command {
            args,
            tree,
            read_only,
        } = self.command(&req, &entry)?;
        let seccomp = self.seccomp(req.spec.seccomp.as_ref())?;
        container.mount_out(limits.workdir_bytes, req.spec.uid, req.spec.gid)?;
        let dir = container.dir();
        let bundle_dir = dir.root().join("bundle");
        let etc = bundle_dir.join("etc");
        bundle::write_etc(&etc, &req.spec)?;
        let work = dir.work();
        let out = dir.out();
        let plan = BundlePlan {
            rootfs: &self.runtime.rootfs,
            args,
            skill_dir: &work,
            out_dir: &out,
            etc_dir: &etc,
            runtime_tree: tree.as_deref(),
            read_only,
            seccomp,
            cgroup: format!("{CGROUP_PARENT}/{cid}"),
            runtime_pids: (self.runtime.kind == RuntimeKind::Runsc)
                .then(|| runsc_host_pids(limits.pids)),
        };
        bundle::config(&req.spec, &plan)?
            .save(bundle_dir.join("config.json"))
            .map_err(|e| ExecError::Other(format!("writing the bundle's config.json: {e}")))?;
        let input = serde_json::to_vec(&req.input)
            .map_err(|e| ExecError::Other(format!("serializing the input: {e}")))?;

        let pid_file = bundle_dir.join("pid");
        let log_file = bundle_dir.join("runtime.log");
        marks.at("prepare");
        let mut cmd = tokio::process::Command::new(&self.runtime.binary);
        cmd.args(self.runtime.global_args());
        if self.runtime.kind != RuntimeKind::Runsc {
            cmd.arg("--log")
                .arg(&log_file)
                .args(["--log-format", "json"]);
        }
        cmd.arg("run")
            .arg("--bundle")
            .arg(&bundle_dir)
            .arg("--pid-file")
            .arg(&pid_file);
        if self.runtime.kind != RuntimeKind::Runsc {
            cmd.arg("--keep");
        }
        cmd.arg(&cid)
            .env_clear()
            .env("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let started = Instant::now();
        let mut child = cmd
            .spawn()
            .map_err(|e| ExecError::io(format!("starting {}", self.runtime.binary.display()), e))?;
        let mut stdin = child.stdin.take().expect("stdin was piped");
        let feed = tokio::spawn(async move {
            // A skill that exits without reading its input closes the pipe: not an error.
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        });
        let stdout = Arc::new(Mutex::new(Capture::new(limits.stdout_cap)));
        let stderr = Arc::new(Mutex::new(Capture::new(limits.stderr_cap)));
        let readers = [
            tokio::spawn(read_capped(
                child.stdout.take().expect("piped"),
                stdout.clone(),
            )),
            tokio::spawn(read_capped(
                child.stderr.take().expect("piped"),
                stderr.clone(),
            )),
        ];
        let (status, timed_out) = match tokio::time::timeout(limits.wall_timeout, child.wait())
            .await
        {
            Ok(status) => (status, false),
            Err(_) => {
                self.kill(&cid).await;
                let status = match tokio::time::timeout(RUNTIME_CALL_TIMEOUT, child.wait()).await {
                    Ok(status) => status,
                    Err(_) => {
                        let _ = child.kill().await;
                        child.wait().await
                    }
                };
                (status, true)
            }
        };
        let wall = started.elapsed();
        marks.at("runtime");
        let status = status.map_err(|e| ExecError::io("waiting for the OCI runtime", e))?;
        feed.abort();
        for r in readers {
            // A process that escaped the container holding a pipe is abandoned.
            if tokio::time::timeout(DRAIN_GRACE, r).await.is_err() {
                tracing::warn!(container = %cid, "an output pipe stayed open after the run");
            }
        }
        marks.at("drain");
        let take = |c: Arc<Mutex<Capture>>| async move {
            let mut c = c.lock().await;
            (std::mem::take(&mut c.kept), c.truncated)
        };
        let (stdout, stdout_truncated) = take(stdout).await;
        let (stderr, stderr_truncated) = take(stderr).await;
        if !timed_out {
            self.check_started(&pid_file, &log_file, &stderr, status)?;
        }
        let events = self.limit_events(&cid);
        let ended = Ended::of(status, timed_out, self.runtime.kind, &events);
        let mut outcome = skillgate_sandbox::outcome_from(
            ProcessResult {
                exit_code: ended.exit_code,
                signal: ended.signal,
                stdout,
                stderr,
                stdout_truncated,
                stderr_truncated,
                timed_out,
                usage: skillgate_core::ResourceUsage {
                    wall,
                    ..Default::default()
                },
            },
            &limits,
        );
        crate::limits::apply(&mut outcome, ended.oom, ended.pids, &limits);
        let out_dir = container.dir().out();
        let (file_cap, total_cap) = (limits.artifact_file_cap, limits.artifact_total_cap);
        let (artifacts, mut findings) = tokio::task::spawn_blocking(move || {
            skillgate_sandbox::artifacts::collect(&out_dir, file_cap, total_cap)
        })
        .await
        .map_err(|e| ExecError::Other(format!("collecting artifacts: {e}")))?;
        outcome.artifacts = artifacts;
        outcome.findings.append(&mut findings);
        marks.at("collect");
        container.finish();
        // The phases, logged at debug level under `skillgate_executors::oci::timing`
        // (`RUST_LOG=skillgate_executors::oci::timing=debug`): prepare (folder, watcher,
        // `/out`, bundle), runtime (`RUNTIME run` until it exits), drain (the rest of
        // stdout and stderr), collect (the cgroup's counters, `/out`), in milliseconds;
        // the removal follows, in the watcher.
        tracing::debug!(target: "skillgate_executors::oci::timing", container = %cid, phases_ms = %marks.summary());
        Ok(outcome)
    }

    /// Kills the container (all its processes: the pid namespace ends with its first).
    async fn kill(&self, cid: &str) {
        let kill = tokio::process::Command::new(&self.runtime.binary)
            .args(self.runtime.global_args())
            .args(["kill", cid, "KILL"])
            .stdin(std::process::Stdio::null())
            .output();
        match tokio::time::timeout(RUNTIME_CALL_TIMEOUT, kill).await {
            Ok(Ok(o)) if o.status.success() => {}
            // It may have ended between the deadline and the kill.
            Ok(Ok(o)) => tracing::debug!(
                container = %cid,
                error = %String::from_utf8_lossy(&o.stderr).trim(),
                "killing an OCI container at its deadline"
            ),
            Ok(Err(e)) => {
                tracing::warn!(container = %cid, error = %e, "running the OCI runtime's kill")
            }
            Err(_) => tracing::warn!(container = %cid, "the OCI runtime's kill timed out"),
        }
    }

    /// A run whose container never started (no pid file), or whose runtime logged an
    /// error, is the executor's failure, never the skill's exit.
    fn check_started(
        &self,
        pid_file: &Path,
        log_file: &Path,
        stderr: &[u8],
        status: std::process::ExitStatus,
    ) -> Result<(), ExecError> {
        let logged = std::fs::read_to_string(log_file).unwrap_or_default();
        let errors: Vec<String> = logged
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| matches!(v["level"].as_str(), Some("error" | "fatal")))
            .filter_map(|v| v["msg"].as_str().map(str::to_owned))
            .collect();
        if !pid_file.exists() || !errors.is_empty() {
            let why = if errors.is_empty() {
                String::from_utf8_lossy(stderr).trim().to_string()
            } else {
                errors.join("; ")
            };
            return Err(ExecError::Other(format!(
                "OCI runtime {} could not run the container ({status}): {why}",
                self.runtime.binary.display()
            )));
        }
        Ok(())
    }

    /// What the container's cgroup saw (runc and crun keep it until the delete).
    fn limit_events(&self, cid: &str) -> LimitEvents {
        if self.runtime.kind == RuntimeKind::Runsc {
            return LimitEvents::default();
        }
        let v2 = cgroup_dir("", cid);
        if v2.join("memory.events").exists() {
            return LimitEvents {
                oom_kills: read_key(&v2.join("memory.events"), "oom_kill"),
                pids_max_hits: read_key(&v2.join("pids.events"), "max"),
                read: true,
            };
        }
        let memory = cgroup_dir("memory", cid);
        LimitEvents {
            oom_kills: read_key(&memory.join("memory.oom_control"), "oom_kill"),
            pids_max_hits: read_key(&cgroup_dir("pids", cid).join("pids.events"), "max"),
            read: memory.exists(),
        }
    }
}

/// What the container runs, and the host paths it needs for that.
struct Command {
    /// The interpreter, its arguments and the entry script.
    args: Vec<String>,
    /// The runtime's tree, bound at `/runtime`.
    tree: Option<PathBuf>,
    /// Host paths bound read-only at their own path.
    read_only: Vec<PathBuf>,
}

/// The container id of the request `id`.
fn container_id(id: &str) -> String {
    format!("skillgate-{id}")
}

/// The container's cgroup folder under the controller `controller` (`""`: cgroup v2).
fn cgroup_dir(controller: &str, cid: &str) -> PathBuf {
    Path::new("/sys/fs/cgroup")
        .join(controller)
        .join(CGROUP_PARENT.trim_start_matches('/'))
        .join(cid)
}

/// What the container's cgroup counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct LimitEvents {
    oom_kills: u64,
    pids_max_hits: u64,
    /// The counters were read (runc, crun); under runsc they are not.
    read: bool,
}

/// How the container ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ended {
    exit_code: Option<i32>,
    signal: Option<i32>,
    /// The memory limit killed it.
    oom: bool,
    /// Forks were refused at the pids limit.
    pids: bool,
}

impl Ended {
    /// The runtime exits with the skill's code, or 128 + the signal that ended it (a
    /// skill that exits 137 by itself reads as SIGKILL). At the deadline it is the
    /// executor's SIGKILL. Out of memory: the cgroup's counter where it was read, else
    /// (gVisor) a SIGKILL the executor did not send.
    fn of(
        status: std::process::ExitStatus,
        timed_out: bool,
        kind: RuntimeKind,
        ev: &LimitEvents,
    ) -> Ended {
        use std::os::unix::process::ExitStatusExt;
        let code = status
            .code()
            .unwrap_or_else(|| 128 + status.signal().unwrap_or(libc_sigkill()));
        let (exit_code, signal) = if timed_out {
            (None, Some(libc_sigkill()))
        } else {
            crate::capture::exit_or_signal(code)
        };
        let oom = !timed_out
            && if ev.read {
                ev.oom_kills > 0
            } else {
                kind == RuntimeKind::Runsc && signal == Some(libc_sigkill())
            };
        Ended {
            exit_code,
            signal,
            oom,
            pids: !timed_out && ev.pids_max_hits > 0,
        }
    }
}

const fn libc_sigkill() -> i32 {
    9
}

/// `true` when `profile` kills on some call (gVisor's runsc cannot load that).
/// Reads `r` to its end into `into` (kept up to its cap, the rest drained).
async fn read_capped(mut r: impl AsyncRead + Unpin, into: Arc<Mutex<Capture>>) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => into.lock().await.push(&buf[..n]),
        }
    }
}

impl tower::Service<ExecRequest> for OciExecutor {
    type Response = ExecOutcome;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<ExecOutcome, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: ExecRequest) -> Self::Future {
        let this = self.clone();
        Box::pin(async move {
            let started = Instant::now();
            let mut outcome = this.run(req).await.map_err(|e| Box::new(e) as BoxError)?;
            let overhead = started.elapsed().saturating_sub(outcome.usage.wall);
            outcome.record_layer(LayerName::Executor, overhead, Vec::new());
            Ok(outcome)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn exited(code: i32) -> std::process::ExitStatus {
        std::process::ExitStatus::from_raw(code << 8)
    }

    #[test]
    fn the_runtime_kind_comes_from_the_file_name() {
        assert_eq!(
            RuntimeKind::of(Path::new("/usr/sbin/runc")),
            Some(RuntimeKind::Runc)
        );
        assert_eq!(
            RuntimeKind::of(Path::new("runsc")),
            Some(RuntimeKind::Runsc)
        );
        assert_eq!(
            RuntimeKind::of(Path::new("/opt/runsc-20240729")),
            Some(RuntimeKind::Runsc)
        );
        assert_eq!(
            RuntimeKind::of(Path::new("/usr/bin/crun")),
            Some(RuntimeKind::Crun)
        );
        assert_eq!(RuntimeKind::of(Path::new("/usr/bin/youki")), None);
    }

    #[test]
    fn out_of_memory_is_the_cgroups_counter_or_gvisors_unsent_sigkill() {
        let read = |oom, pids| LimitEvents {
            oom_kills: oom,
            pids_max_hits: pids,
            read: true,
        };
        // runc: the counter decides; a SIGKILL without it is a plain signal.
        assert!(Ended::of(exited(137), false, RuntimeKind::Runc, &read(1, 0)).oom);
        let plain = Ended::of(exited(137), false, RuntimeKind::Runc, &read(0, 0));
        assert!(!plain.oom);
        assert_eq!((plain.exit_code, plain.signal), (None, Some(9)));
        // gVisor: no counter, its SIGKILL is the limit's; the deadline's never is.
        let unread = LimitEvents::default();
        assert!(Ended::of(exited(137), false, RuntimeKind::Runsc, &unread).oom);
        assert!(!Ended::of(exited(137), true, RuntimeKind::Runsc, &unread).oom);
        assert!(!Ended::of(exited(137), true, RuntimeKind::Runc, &read(1, 0)).oom);
        // Ordinary exits, other signals, refused forks.
        assert_eq!(
            Ended::of(exited(3), false, RuntimeKind::Runc, &read(0, 0)).exit_code,
            Some(3)
        );
        assert_eq!(
            Ended::of(exited(159), false, RuntimeKind::Runc, &read(0, 0)).signal,
            Some(31)
        );
        assert!(Ended::of(exited(0), false, RuntimeKind::Runc, &read(0, 4)).pids);
    }

    #[test]
    fn crun_is_refused_on_hybrid_cgroups_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("memory")).unwrap();
        std::fs::create_dir_all(root.join("unified")).unwrap();
        std::fs::write(root.join("unified/cgroup.controllers"), "hugetlb\n").unwrap();
        let why = crun_refusal(root).expect("hybrid");
        assert!(why.contains("hugetlb") && why.contains("runc"), "{why}");
        // Nothing on the v2 mount: crun runs.
        std::fs::write(root.join("unified/cgroup.controllers"), "\n").unwrap();
        assert_eq!(crun_refusal(root), None);
        // v2 only (no v1 controller folders): crun runs.
        let v2 = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(v2.path().join("unified")).unwrap();
        std::fs::write(
            v2.path().join("unified/cgroup.controllers"),
            "memory pids\n",
        )
        .unwrap();
        assert_eq!(crun_refusal(v2.path()), None);
    }

    #[test]
    fn a_missing_runtime_is_an_error_naming_it() {
        let err = OciExecutor::new(OciSettings::new("/nonexistent/runc")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/runc"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let youki = dir.path().join("youki");
        std::fs::write(&youki, "").unwrap();
        let err = OciExecutor::new(OciSettings::new(&youki)).unwrap_err();
        assert!(err.to_string().contains("not runc, runsc or crun"), "{err}");
    }
}
