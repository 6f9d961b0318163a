//! The Docker Engine API executor: one container per run, on Docker Engine or on Podman's
//! compatible service.
//!
//! A run creates a container from the runtime's image (see [`image`]) with the spec's
//! containment (see [`create::container_body`]), attaches to it, starts it, writes the
//! input to its stdin and half-closes it, reads stdout and stderr demultiplexed (each
//! kept up to its cap, the rest drained), waits until it exits or the wall-clock deadline
//! passes (then kills it), reads `/out` through the archive endpoint (see [`crate::archive`]),
//! and removes the container. `/out` is a tmpfs of the work directory's size that the host
//! mounts in the run's folder and the engine binds (a volume of the engine has no size
//! limit, and a tmpfs of the engine's is gone by the time the archive is read); the
//! container is removed on every path: a guard spawns the removal when the run's
//! future is dropped, and a container the engine could not remove (it was down) is
//! removed before the executor's next run. A container whose `skillgate` process died
//! mid-run (even by SIGKILL) is removed, with its run's folder, by the first run of the
//! next docker executor on this host (see [`sweep`]).
//!
//! The engine's flavour is told by the headers of its `/_ping` answer (see [`ping`]), and
//! its differences handled:
//! - the seccomp profile goes inline to Docker Engine, as a host file to Podman;
//! - Docker Engine reports an out-of-memory kill as `OOMKilled`; Podman only as exit 137
//!   (`OOMKilled` stays false), so under Podman a 137 the executor did not cause (it was
//!   not the deadline) is taken as the memory limit: every container has one, and nothing
//!   else in it sends SIGKILL but the skill itself (which then reads as resource
//!   exhaustion, never as success);
//! - under a per-container runtime (gVisor's `runsc`) Docker Engine sometimes misses the
//!   out-of-memory kill (137, `OOMKilled` false): the container's memory cgroup is
//!   watched for the kernel's `oom_kill` counter instead (see [`watch`]);
//! - archive entries are named `out/…` by Docker Engine, `/…` by Podman;
//! - Podman ignores a per-container OCI runtime, so a [`DockerSettings::runtime`] (gVisor's
//!   `runsc`) is refused there (configure it in the service's `containers.conf` instead).

mod create;
mod guard;
pub mod image;
mod ping;
pub mod sweep;
mod watch;

pub use crate::archive::{ArchiveNames, archive_budget, collect_archive};
pub use create::{
    ContainerPlan, NPROC_ULIMIT, OUT_DIR, RUN_LABEL, SKILL_DIR, SeccompOpt, WORK_DIR,
    container_body,
};

use crate::capture::Capture;
use crate::run_dir::{OutTmpfs, open_to_container};
use bollard::Docker;
use bollard::container::LogOutput;
use bollard::query_parameters::{
    AttachContainerOptions, CreateContainerOptions, DownloadFromContainerOptions,
    KillContainerOptions, WaitContainerOptions,
};
use futures_util::StreamExt;
use guard::ContainerGuard;
use skillgate_core::{
    BoxError, Capabilities, ExecError, ExecOutcome, ExecRequest, Finding, Language, LayerName,
    RuntimeTier,
};
use skillgate_sandbox::supervisor::ProcessResult;
use skillgate_sandbox::workdir::WorkDir;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;

/// How long an engine call outside the run itself (create, start, inspect, archive,
/// remove) may take before the run fails with an error naming the engine.
pub const ENGINE_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Which engine answers on the socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// Docker Engine (`dockerd`).
    Docker,
    /// Podman's Docker-compatible service (`podman system service`).
    Podman,
}

impl Flavour {
    /// `docker` or `podman`.
    pub fn as_str(self) -> &'static str {
        match self {
            Flavour::Docker => "docker",
            Flavour::Podman => "podman",
        }
    }
}

/// Where the engine is and what runs the skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DockerSettings {
    /// The engine's unix socket.
    pub socket: PathBuf,
    /// The image of runs whose skill names no runtime (it must hold `/usr/bin/python3`
    /// and, for JavaScript, `/usr/bin/node`). A run with a runtime uses that runtime's
    /// image, [`image::runtime_image`].
    pub image: Option<String>,
    /// The engine's OCI runtime for the containers (`runsc` for gVisor), when not its
    /// default. Docker Engine only.
    pub runtime: Option<String>,
}

impl DockerSettings {
    /// Settings for the engine at `socket`, its default runtime, no default image.
    pub fn new(socket: impl Into<PathBuf>) -> Self {
        DockerSettings {
            socket: socket.into(),
            image: None,
            runtime: None,
        }
    }
}

/// The Docker Engine API executor (see the [module](self) documentation).
#[derive(Debug, Clone)]
pub struct DockerExecutor {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    docker: Docker,
    settings: DockerSettings,
    /// Asked of the engine on first use.
    flavour: tokio::sync::OnceCell<Flavour>,
    /// How many containers of ended owners the first run removed ([`sweep`]).
    swept: tokio::sync::OnceCell<usize>,
    /// Containers whose removal failed, removed again before the next run.
    pending: guard::Pending,
}

/// Connects to the engine at `socket` (no call is made yet).
pub fn connect(socket: &Path) -> Result<Docker, ExecError> {
    let path = socket.to_str().ok_or_else(|| {
        ExecError::Other(format!(
            "the engine socket path {} is not UTF-8",
            socket.display()
        ))
    })?;
    Docker::connect_with_unix(
        path,
        ENGINE_CALL_TIMEOUT.as_secs(),
        bollard::API_DEFAULT_VERSION,
    )
    .map_err(|e| engine_error(socket, "connecting", e))
}

fn engine_error(socket: &Path, what: &str, e: impl std::fmt::Display) -> ExecError {
    ExecError::Other(format!(
        "container engine at {}: {what}: {e}",
        socket.display()
    ))
}

impl DockerExecutor {
    /// An executor for the engine at the settings' socket; nothing is asked of the engine
    /// until the first run (or [`DockerExecutor::connect`]), so building a pipeline never
    /// waits for it.
    pub fn new(settings: DockerSettings) -> Result<DockerExecutor, ExecError> {
        let docker = connect(&settings.socket)?;
        Ok(DockerExecutor {
            inner: Arc::new(Inner {
                docker,
                settings,
                flavour: tokio::sync::OnceCell::new(),
                swept: tokio::sync::OnceCell::new(),
                pending: guard::Pending::default(),
            }),
        })
    }

    /// Connects to the engine, asks its flavour, and checks the settings against it.
    pub async fn connect(settings: DockerSettings) -> Result<DockerExecutor, ExecError> {
        let exec = DockerExecutor::new(settings)?;
        exec.engine_flavour().await?;
        Ok(exec)
    }

    /// The engine's flavour, asked once (see [`ping`]); an engine that does not answer,
    /// or a setting it cannot enforce, is an error naming the socket.
    pub async fn engine_flavour(&self) -> Result<Flavour, ExecError> {
        let settings = &self.inner.settings;
        let flavour = self
            .inner
            .flavour
            .get_or_try_init(|| async {
                tokio::time::timeout(ENGINE_CALL_TIMEOUT, ping::flavour(&settings.socket))
                    .await
                    .map_err(|_| engine_error(&settings.socket, "pinging it", "timed out"))?
                    .map_err(|e| {
                        engine_error(
                            &settings.socket,
                            "pinging it (is the engine running? `scripts/services up docker` \
                             starts one)",
                            e,
                        )
                    })
            })
            .await?;
        if *flavour == Flavour::Podman && settings.runtime.is_some() {
            return Err(ExecError::Other(format!(
                "container engine at {}: Podman ignores a per-container runtime, so runtime \
                 `{}` cannot be enforced; set it in the service's containers.conf \
                 ([engine] runtime) and leave `runtime` out of [executor]",
                settings.socket.display(),
                settings.runtime.as_deref().unwrap_or_default()
            )));
        }
        Ok(*flavour)
    }

    /// The engine's flavour, once known (after a run or [`DockerExecutor::connect`]).
    pub fn flavour(&self) -> Option<Flavour> {
        self.inner.flavour.get().copied()
    }

    /// The client, for loading images ([`image::load_oci_archive`]).
    pub fn client(&self) -> &Docker {
        &self.inner.docker
    }

    /// What this executor enforces: the container tier, every limit of the spec, the
    /// uid, seccomp and network none; not a destination allow-list (a container has
    /// either no network or the engine's), and under gVisor (`runtime = "runsc"`) not a
    /// seccomp kill action (runsc cannot load `kill_process`).
    pub fn capabilities(&self) -> Capabilities {
        Capabilities {
            executor: match self.flavour() {
                Some(f) => f.as_str().into(),
                None => "docker".into(),
            },
            tier: RuntimeTier::Container,
            wall_timeout: true,
            cpu_time: true,
            memory: true,
            pids: true,
            pids_reported: self.inner.settings.runtime.as_deref() != Some("runsc"),
            file_size: true,
            open_files: true,
            output_caps: true,
            workdir_size: true,
            user: true,
            seccomp: true,
            seccomp_kill: self.inner.settings.runtime.as_deref() != Some("runsc"),
            network_none: true,
            network_allow_list: false,
            clean_env: true,
            workspace: false,
        }
    }

    /// The containers that still exist for the request ids `ids` (by their
    /// [`RUN_LABEL`]): the cleanup probe of the conformance kit, and a way to find what
    /// an engine that was killed mid-run kept.
    pub async fn leftovers(&self, ids: &[String]) -> Result<Vec<String>, ExecError> {
        let mut left = Vec::new();
        for id in ids {
            let opts = bollard::query_parameters::ListContainersOptions {
                all: true,
                filters: Some(std::collections::HashMap::from([(
                    "label".to_string(),
                    vec![format!("{RUN_LABEL}={id}")],
                )])),
                ..Default::default()
            };
            let found = call(
                &self.inner.settings.socket,
                "listing containers",
                self.inner.docker.list_containers(Some(opts)),
            )
            .await?;
            left.extend(found.into_iter().filter_map(|c| c.id));
        }
        Ok(left)
    }

    /// The image and command of a run.
    fn image_and_cmd(
        &self,
        req: &ExecRequest,
        entry: &str,
    ) -> Result<(String, Vec<String>), ExecError> {
        let language = req.skill.language;
        let args = skillgate_sandbox::Interpreter::isolation_args_of(language)
            .iter()
            .map(|a| a.to_string());
        let (image, program) = match (&req.spec.interpreter, &req.skill.runtime) {
            (Some(r), _) => (image::runtime_image(&r.runtime), image::program_in_image(r)),
            (None, Some(name)) => {
                return Err(ExecError::Other(format!(
                    "the skill asks for runtime `{name}` but no runtime was resolved for this \
                     run (the isolation layer resolves it: is it disabled?)"
                )));
            }
            (None, None) => {
                let image = self.inner.settings.image.clone().ok_or_else(|| {
                    ExecError::Other(format!(
                        "the skill names no runtime and [executor] sets no `image` for the {} \
                         engine at {}",
                        self.flavour().unwrap_or(Flavour::Docker).as_str(),
                        self.inner.settings.socket.display()
                    ))
                })?;
                let program = match language {
                    Language::Python => "/usr/bin/python3",
                    Language::JavaScript => "/usr/bin/node",
                    Language::Shell => "/bin/dash",
                };
                (image, program.to_string())
            }
        };
        let cmd = std::iter::once(program)
            .chain(args)
            .chain(std::iter::once(format!("{SKILL_DIR}/{entry}")))
            .collect();
        Ok((image, cmd))
    }

    async fn run(&self, req: ExecRequest) -> Result<ExecOutcome, ExecError> {
        let flavour = self.engine_flavour().await?;
        let inner = &self.inner;
        // What processes that died mid-run left (once per executor).
        inner
            .swept
            .get_or_init(|| sweep::sweep(&inner.docker))
            .await;
        // An engine that was down when an earlier run ended is back: remove what it kept.
        guard::retry_pending(&inner.docker, &inner.pending).await;
        let socket = &inner.settings.socket;
        let docker = &inner.docker;
        let dir = WorkDir::prepare(&req.skill)?;
        open_to_container(&dir)?;
        // Unmounted before the folder is removed (dropped first).
        let out = OutTmpfs::mount(
            &dir,
            req.spec.limits.workdir_bytes,
            req.spec.uid,
            req.spec.gid,
        )?;
        let entry = dir
            .entry()
            .strip_prefix(dir.work())
            .map(|p| p.display().to_string())
            .unwrap_or_else(|_| req.skill.entry.clone());
        let (image, cmd) = self.image_and_cmd(&req, &entry)?;
        let seccomp = match &req.spec.seccomp {
            None => None,
            Some(profile) => {
                if inner.settings.runtime.as_deref() == Some("runsc") && profile.kills() {
                    return Err(ExecError::HostUnsupported(format!(
                        "gVisor (runsc) rejects the seccomp action kill_process of profile \
                         `{}` (\"invalid action: SCMP_ACT_KILL_PROCESS\"); use the engine's \
                         default runtime, or a profile whose actions are errno",
                        profile.name
                    )));
                }
                let arch = skillgate_confine::Arch::native().ok_or_else(|| {
                    ExecError::HostUnsupported("no seccomp support for this architecture".into())
                })?;
                let json = skillgate_confine::oci::to_json(profile, &[arch])
                    .map_err(|e| ExecError::Other(format!("emitting the seccomp profile: {e}")))?;
                Some(match flavour {
                    Flavour::Docker => SeccompOpt::Inline(json),
                    Flavour::Podman => {
                        let path = dir.root().join("seccomp.json");
                        std::fs::write(&path, json)
                            .map_err(|e| ExecError::io("writing the seccomp profile", e))?;
                        SeccompOpt::Path(path.display().to_string())
                    }
                })
            }
        };
        let skill_dir = dir.work().display().to_string();
        let out_dir = out.path().display().to_string();
        let run_dir = dir.root().display().to_string();
        let plan = ContainerPlan {
            image: &image,
            cmd,
            skill_dir: &skill_dir,
            out_dir: &out_dir,
            seccomp,
            runtime: inner.settings.runtime.as_deref(),
            run_id: req.id.to_string(),
            owner: sweep::owner(),
            run_dir: &run_dir,
        };
        let body = container_body(&req.spec, &plan);
        let name = format!("skillgate-{}", req.id);
        let created = call(
            socket,
            "creating the container",
            docker.create_container(
                Some(CreateContainerOptions {
                    name: Some(name),
                    ..Default::default()
                }),
                body,
            ),
        )
        .await
        .map_err(|e| missing_image(e, &image, socket))?;
        let guard = ContainerGuard::new(docker.clone(), created.id, inner.pending.clone());
        let result = self.run_container(&req, &guard, &dir, flavour).await;
        let removed = call(socket, "removing the container", guard.remove()).await;
        let outcome = result?;
        removed?;
        Ok(outcome)
    }

    async fn run_container(
        &self,
        req: &ExecRequest,
        guard: &ContainerGuard,
        dir: &WorkDir,
        flavour: Flavour,
    ) -> Result<ExecOutcome, ExecError> {
        let inner = &self.inner;
        let socket = &inner.settings.socket;
        let docker = &inner.docker;
        let id = guard.id();
        let limits = req.spec.limits;
        let attached = call(
            socket,
            "attaching to the container",
            docker.attach_container(
                id,
                Some(AttachContainerOptions {
                    stream: true,
                    stdin: true,
                    stdout: true,
                    stderr: true,
                    ..Default::default()
                }),
            ),
        )
        .await?;
        let input = serde_json::to_vec(&req.input)
            .map_err(|e| ExecError::Other(format!("serializing the input: {e}")))?;
        // What the engine does not say, or not reliably: forks refused at the pids limit,
        // and gVisor's out-of-memory kills. The kernel's counters do (read from before the
        // start, while the cgroup exists).
        let watch =
            watch::CgroupWatch::start(watch::counters(Path::new("/sys/fs/cgroup"), id, flavour));
        let started = Instant::now();
        call(
            socket,
            "starting the container",
            docker.start_container(id, None),
        )
        .await?;

        let mut stdout = Capture::new(limits.stdout_cap);
        let mut stderr = Capture::new(limits.stderr_cap);
        let mut stdin_pipe = attached.input;
        let mut output = attached.output;
        let run = async {
            let feed = async {
                // A skill that exits without reading its input closes the pipe: not an error.
                let _ = stdin_pipe.write_all(&input).await;
                let _ = stdin_pipe.shutdown().await;
            };
            let read = async {
                while let Some(frame) = output.next().await {
                    match frame {
                        Ok(LogOutput::StdOut { message }) => stdout.push(&message),
                        Ok(LogOutput::StdErr { message }) => {
                            if !(flavour == Flavour::Podman && is_podman_attach_error(&message)) {
                                stderr.push(&message);
                            }
                        }
                        Ok(_) => {}
                        Err(_) => break,
                    }
                }
            };
            tokio::join!(feed, read);
            let mut wait = docker.wait_container(id, None::<WaitContainerOptions>);
            // A non-zero exit arrives as an error; the exit code is read from inspect.
            let _ = wait.next().await;
        };
        let timed_out = tokio::time::timeout(limits.wall_timeout, run)
            .await
            .is_err();
        if timed_out {
            let kill = docker.kill_container(
                id,
                Some(KillContainerOptions {
                    signal: "SIGKILL".into(),
                }),
            );
            // Already exited between the deadline and the kill: fine.
            let _ = call(socket, "killing the container", kill).await;
            let mut wait = docker.wait_container(id, None::<WaitContainerOptions>);
            let _ = tokio::time::timeout(ENGINE_CALL_TIMEOUT, wait.next()).await;
        }
        let wall = started.elapsed();
        let state = call(
            socket,
            "inspecting the container",
            docker.inspect_container(id, None),
        )
        .await?
        .state
        .unwrap_or_default();
        if let Some(err) = state.error.as_deref().filter(|e| !e.is_empty()) {
            return Err(engine_error(socket, "running the container", err));
        }
        let code = state.exit_code.ok_or_else(|| {
            engine_error(
                socket,
                "inspecting the container",
                "no exit code after it stopped",
            )
        })?;
        let code = i32::try_from(code).unwrap_or(i32::MAX);
        // A SIGKILL with the kernel's OOM kill counted in the container's cgroup.
        let counted = code == 128 + 9 && watch.oom_seen();
        let forks_refused = watch.pids_seen();
        drop(watch);
        let oom_killed = if counted {
            Some(true)
        } else {
            state.oom_killed
        };
        let Ended {
            exit_code,
            signal,
            oom,
        } = Ended::of(code, oom_killed, timed_out, flavour);
        let mut outcome = skillgate_sandbox::outcome_from(
            ProcessResult {
                exit_code,
                signal,
                stdout: stdout.kept,
                stderr: stderr.kept,
                stdout_truncated: stdout.truncated,
                stderr_truncated: stderr.truncated,
                timed_out,
                usage: skillgate_core::ResourceUsage {
                    wall,
                    ..Default::default()
                },
            },
            &limits,
        );
        crate::limits::apply(&mut outcome, oom, forks_refused, &limits);
        let (artifacts, mut findings) = self.artifacts(id, dir, &limits, flavour).await?;
        outcome.artifacts = artifacts;
        outcome.findings.append(&mut findings);
        Ok(outcome)
    }

    /// Reads `/out` through the archive endpoint (bounded by [`archive_budget`]) and
    /// collects it; an empty `/out` is not asked for.
    async fn artifacts(
        &self,
        id: &str,
        dir: &WorkDir,
        limits: &skillgate_core::Limits,
        flavour: Flavour,
    ) -> Result<(Vec<skillgate_core::Artifact>, Vec<Finding>), ExecError> {
        // `/out` is the host's tmpfs: when the skill wrote nothing there, there is nothing
        // to ask the engine for (Podman mounts the container's root to answer, ~80 ms).
        if std::fs::read_dir(dir.out()).is_ok_and(|mut entries| entries.next().is_none()) {
            return Ok((Vec::new(), Vec::new()));
        }
        let socket = &self.inner.settings.socket;
        let budget = archive_budget(limits);
        let mut stream = self.inner.docker.download_from_container(
            id,
            Some(DownloadFromContainerOptions {
                path: OUT_DIR.into(),
            }),
        );
        let mut tar = Vec::new();
        let read = async {
            while let Some(chunk) = stream.next().await {
                let chunk = chunk.map_err(|e| engine_error(socket, "reading /out", e))?;
                if tar.len() as u64 + chunk.len() as u64 > budget {
                    return Ok(false);
                }
                tar.extend_from_slice(&chunk);
            }
            Ok::<_, ExecError>(true)
        };
        let fits = tokio::time::timeout(ENGINE_CALL_TIMEOUT, read)
            .await
            .map_err(|_| engine_error(socket, "reading /out", "timed out"))??;
        if !fits {
            let f = crate::archive::over_budget(budget, OUT_DIR);
            return Ok((Vec::new(), vec![f]));
        }
        let names = match flavour {
            Flavour::Docker => ArchiveNames::UnderRoot,
            Flavour::Podman => ArchiveNames::Inside,
        };
        let scratch = dir.root().join("collected");
        std::fs::create_dir(&scratch)
            .map_err(|e| ExecError::io("creating the artifact folder", e))?;
        let limits = *limits;
        tokio::task::spawn_blocking(move || collect_archive(&tar[..], names, &scratch, &limits))
            .await
            .map_err(|e| ExecError::Other(format!("collecting artifacts: {e}")))
    }
}

/// How a container ended, from its exit code and state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ended {
    exit_code: Option<i32>,
    signal: Option<i32>,
    /// The memory limit killed it.
    oom: bool,
}

impl Ended {
    /// A code over 128 is a signal (the skill is the container's first process, so the
    /// engine reports 128 + the signal that ended it; a skill that exits 130 by itself
    /// reads as SIGINT). At the deadline it is the executor's SIGKILL. Out of memory:
    /// Docker Engine says so (`OOMKilled`); Podman never does, so there a SIGKILL the
    /// deadline did not cause is the memory limit's.
    fn of(code: i32, oom_killed: Option<bool>, timed_out: bool, flavour: Flavour) -> Ended {
        let (exit_code, signal) = if timed_out {
            (None, Some(9))
        } else {
            crate::capture::exit_or_signal(code)
        };
        let oom = !timed_out
            && (oom_killed == Some(true) || (flavour == Flavour::Podman && code == 128 + 9));
        Ended {
            exit_code,
            signal,
            oom,
        }
    }
}

/// `true` when `profile` kills on some call (gVisor's runsc cannot load that).
/// Podman's service writes its own failure to read the container's attach socket into
/// the stderr stream when the container exits while stdin is half-closed
/// (`Error: read unixpacket @->/proc/self/fd/N/attach: read: connection reset by peer`);
/// that frame is the engine's, not the skill's.
fn is_podman_attach_error(frame: &[u8]) -> bool {
    let text = String::from_utf8_lossy(frame);
    let text = text.trim_end();
    text.starts_with("Error: read unixpacket ")
        && text.ends_with("/attach: read: connection reset by peer")
        && !text.contains('\n')
}

/// The image is missing: say which, and how to load it.
fn missing_image(e: ExecError, image: &str, socket: &Path) -> ExecError {
    let text = e.to_string();
    if text.contains("No such image") || text.contains("image not known") || text.contains("404") {
        ExecError::Other(format!(
            "image `{image}` is missing in the container engine at {}: load the runtime's \
             image (`skillgate runtime export NAME --format oci-archive -o F`, then \
             skillgate_executors::docker::image::load_oci_archive), or set [executor] image",
            socket.display()
        ))
    } else {
        e
    }
}

/// One engine call under [`ENGINE_CALL_TIMEOUT`], its failure naming the engine's socket.
async fn call<T, E: std::fmt::Display>(
    socket: &Path,
    what: &str,
    fut: impl Future<Output = Result<T, E>>,
) -> Result<T, ExecError> {
    tokio::time::timeout(ENGINE_CALL_TIMEOUT, fut)
        .await
        .map_err(|_| engine_error(socket, what, "timed out"))?
        .map_err(|e| engine_error(socket, what, e))
}

impl tower::Service<ExecRequest> for DockerExecutor {
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

    #[test]
    fn out_of_memory_is_docker_engines_flag_or_podmans_bare_137() {
        let ended = |code, flag, timed_out, f| Ended::of(code, flag, timed_out, f);
        // Docker Engine says so.
        assert!(ended(137, Some(true), false, Flavour::Docker).oom);
        // Docker Engine's 137 without the flag is a plain SIGKILL.
        let e = ended(137, Some(false), false, Flavour::Docker);
        assert!(!e.oom);
        assert_eq!((e.exit_code, e.signal), (None, Some(9)));
        // Podman never sets the flag: its 137 is the memory limit.
        assert!(ended(137, Some(false), false, Flavour::Podman).oom);
        // The deadline's kill is a timeout on both, never out of memory.
        assert!(!ended(137, Some(false), true, Flavour::Podman).oom);
        assert!(!ended(137, Some(true), true, Flavour::Docker).oom);
        // Ordinary exits and other signals.
        assert_eq!(ended(3, None, false, Flavour::Podman).exit_code, Some(3));
        assert_eq!(ended(159, None, false, Flavour::Docker).signal, Some(31));
    }

    #[test]
    fn only_podmans_own_attach_error_frame_is_dropped() {
        assert!(is_podman_attach_error(
            b"Error: read unixpacket @->/proc/self/fd/15/attach: read: connection reset by peer\n"
        ));
        assert!(!is_podman_attach_error(b"to-err"));
        assert!(!is_podman_attach_error(
            b"skill output\nError: read unixpacket @->/proc/self/fd/15/attach: read: connection reset by peer\n"
        ));
    }
}
