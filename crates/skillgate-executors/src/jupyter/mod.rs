//! The Jupyter Kernel Gateway executor: one kernel per run.
//!
//! A run starts a kernel through the gateway's REST API (`POST /api/kernels`), opens its
//! websocket channels, and executes one request: the skill wrapped in a generated
//! [`prelude`] that gives it its input on `sys.stdin` and recovers its exit code. stdout
//! and stderr come back separately (the `stream` messages, by name), each kept up to its
//! cap. At the wall-clock deadline the kernel is interrupted, then deleted, and the run
//! is a `timeout`. A kernel that restarts or dies during the run (`os._exit`, a crash)
//! sends no reply, only a `restarting` or `dead` status: the run is an `error` saying so
//! (output it had not flushed is lost). The kernel is deleted on every path: a guard
//! spawns the deletion when the run's future is dropped, and a kernel the gateway could
//! not delete is deleted before the executor's next run.
//!
//! A kernel gateway is no sandbox: the kernel runs as the gateway's user, with its
//! network, its environment and its file system. [`JupyterExecutor::capabilities`] says
//! so (it enforces the wall clock and the output caps, nothing else), so the isolation
//! layer refuses every spec asking for more (a memory limit, network none, a seccomp
//! profile, ...). Output files cannot be fetched back (the gateway has no contents API),
//! and a skill must be one Python file without a named runtime (the kernel's Python
//! runs it).
//!
//! The client: the REST calls go through `hyper` (already in the tree for the Docker
//! executor), the channels through `tokio-tungstenite`, with the few message types this
//! needs written out ([`channels`]): the `jupyter-websocket-client` crate would bring a
//! TLS stack and its own protocol layer for an exchange of one request.
mod channels;
mod gateway;
mod guard;
pub mod prelude;

pub use gateway::GATEWAY_CALL_TIMEOUT;

use crate::capture::Capture;
use gateway::Gateway;
use guard::KernelGuard;
use skillgate_core::{
    BoxError, Capabilities, ExecError, ExecOutcome, ExecRequest, Finding, Language, LayerName,
    RuntimeTier, Severity, Status,
};
use skillgate_sandbox::supervisor::ProcessResult;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// The environment variable a token may come from instead of the config file.
pub const TOKEN_ENV: &str = "SKILLGATE_JUPYTER_TOKEN";

/// How long, after the deadline, interrupting and deleting the kernel may take before the
/// run returns anyway (the deletion then goes on in the background).
pub const CLEANUP_GRACE: Duration = Duration::from_secs(5);

/// How many runs' kernel ids are remembered for [`JupyterExecutor::leftovers`].
const REMEMBERED_RUNS: usize = 1024;

/// Where the gateway is and which kernel runs the skills.
#[derive(Clone, PartialEq, Eq)]
pub struct JupyterSettings {
    /// The gateway's base URL, `http://host:port` (plus a base path, if it has one).
    pub url: String,
    /// Its auth token (sent as `Authorization: token …`), if it asks for one.
    pub token: Option<String>,
    /// The kernel to start (`python3` unless set).
    pub kernel: String,
    /// How long one call to the gateway (start, interrupt, delete a kernel, open its
    /// channels) may take before the run fails ([`GATEWAY_CALL_TIMEOUT`] unless set). The
    /// skill's own run is bounded by its wall-clock limit instead.
    pub call_timeout: Duration,
}

impl std::fmt::Debug for JupyterSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JupyterSettings")
            .field("url", &self.url)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("kernel", &self.kernel)
            .field("call_timeout", &self.call_timeout)
            .finish()
    }
}

impl JupyterSettings {
    /// Settings for the gateway at `url`, no token, the `python3` kernel.
    pub fn new(url: impl Into<String>) -> Self {
        JupyterSettings {
            url: url.into(),
            token: None,
            kernel: "python3".into(),
            call_timeout: GATEWAY_CALL_TIMEOUT,
        }
    }
}

/// The Jupyter Kernel Gateway executor (see the [module](self) documentation).
#[derive(Debug, Clone)]
pub struct JupyterExecutor {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    gateway: Gateway,
    kernel: String,
    /// Kernels whose deletion failed.
    pending: guard::Pending,
    /// The latest runs' request ids and their kernels.
    recent: Mutex<VecDeque<(String, String)>>,
}

impl JupyterExecutor {
    /// An executor for the gateway of `settings` (its URL checked; nothing is asked of the
    /// gateway until the first run).
    pub fn new(settings: JupyterSettings) -> Result<JupyterExecutor, ExecError> {
        let gateway = Gateway::new(&settings.url, settings.token, settings.call_timeout)?;
        if settings.kernel.is_empty() {
            return Err(ExecError::Other("[executor] kernel is empty".into()));
        }
        Ok(JupyterExecutor {
            inner: Arc::new(Inner {
                gateway,
                kernel: settings.kernel,
                pending: guard::Pending::default(),
                recent: Mutex::new(VecDeque::new()),
            }),
        })
    }

    /// What a kernel gateway enforces: the wall clock (the client's deadline, then the
    /// kernel is deleted, which kills its process group) and the output caps. Nothing of
    /// isolation: no memory, pids, file-size or open-files limit, no uid, no seccomp, no
    /// network restriction, no clean environment.
    pub fn capabilities(&self) -> Capabilities {
        Capabilities {
            executor: "jupyter".into(),
            tier: RuntimeTier::Process,
            wall_timeout: true,
            output_caps: true,
            ..Capabilities::none()
        }
    }

    /// The kernels that still exist on the gateway for the request ids `ids` (of the
    /// latest runs): the cleanup probe of the conformance kit.
    pub async fn leftovers(&self, ids: &[String]) -> Result<Vec<String>, ExecError> {
        let kernels: Vec<String> = {
            let recent = self.inner.recent.lock().unwrap_or_else(|p| p.into_inner());
            recent
                .iter()
                .filter(|(req, _)| ids.contains(req))
                .map(|(_, k)| k.clone())
                .collect()
        };
        let mut left = Vec::new();
        for k in kernels {
            if self.inner.gateway.exists(&k).await? {
                left.push(k);
            }
        }
        Ok(left)
    }

    fn remember(&self, request: String, kernel: String) {
        let mut recent = self.inner.recent.lock().unwrap_or_else(|p| p.into_inner());
        if recent.len() == REMEMBERED_RUNS {
            recent.pop_front();
        }
        recent.push_back((request, kernel));
    }

    /// What of the request a kernel cannot run: `Err` says why.
    fn check(req: &ExecRequest) -> Result<(), ExecError> {
        let skill = &req.skill;
        let refuse = |why: String| Err(ExecError::Other(format!("the Jupyter executor: {why}")));
        if skill.language != Language::Python {
            return refuse(format!(
                "skill `{}` is {}; the kernel runs Python only",
                skill.name,
                skill.language.as_str()
            ));
        }
        if !skill.files.is_empty() {
            return refuse(format!(
                "skill `{}` has {} files besides its entry; a kernel gets the entry script \
                 only",
                skill.name,
                skill.files.len()
            ));
        }
        if let Some(rt) = &skill.runtime {
            return refuse(format!(
                "skill `{}` asks for runtime `{rt}`; the kernel's own Python runs every skill",
                skill.name
            ));
        }
        if req.spec.interpreter.is_some() {
            return refuse(
                "the spec names an interpreter; the kernel's own Python runs every skill".into(),
            );
        }
        Ok(())
    }

    async fn run(&self, req: ExecRequest) -> Result<ExecOutcome, ExecError> {
        Self::check(&req)?;
        let inner = &self.inner;
        let gateway = &inner.gateway;
        // A gateway that did not answer when an earlier run ended is back: delete what
        // that run left.
        guard::retry_pending(gateway, &inner.pending).await;
        let input = serde_json::to_vec(&req.input)
            .map_err(|e| ExecError::Other(format!("serializing the input: {e}")))?;
        let code = prelude::prelude(&req.skill.code, &input, &req.skill.entry);
        let kernel = self.start_kernel(req.id.to_string()).await?;
        let guard = KernelGuard::new(gateway.clone(), kernel, inner.pending.clone());
        let result = self.run_kernel(&req, &guard, &code).await;
        match result {
            Ok((outcome, Ending::Replied)) => {
                guard.delete().await?;
                Ok(outcome)
            }
            Ok((outcome, ending)) => {
                // Past the deadline: interrupt, then delete. A kernel that died is
                // restarting, and the gateway cannot delete it until it has restarted (it
                // answers 500): try again. Within a grace, so that the deadline holds even
                // on a slow gateway; past it the guard deletes it in the background (and
                // the next run, if the gateway still cannot).
                let cleanup = async {
                    if ending == Ending::TimedOut {
                        let _ = gateway.interrupt(guard.id()).await;
                    }
                    while gateway.delete(guard.id()).await.is_err() {
                        tokio::time::sleep(Duration::from_millis(250)).await;
                    }
                    guard.disarm();
                };
                let _ = tokio::time::timeout(CLEANUP_GRACE, cleanup).await;
                Ok(outcome)
            }
            Err(e) => {
                // Deleted by the guard's drop (in the background): the error is the run's.
                drop(guard);
                Err(e)
            }
        }
    }

    /// Starts the run's kernel in a task of its own, so that a run dropped while the
    /// gateway starts it still deletes it (the task does, when nobody waits for the id).
    async fn start_kernel(&self, request: String) -> Result<String, ExecError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let this = self.clone();
        tokio::spawn(async move {
            let gateway = &this.inner.gateway;
            let started = gateway.start_kernel(&this.inner.kernel).await;
            if let Ok(kernel) = &started {
                this.remember(request, kernel.clone());
            }
            if let Err(Ok(kernel)) = tx.send(started) {
                let guard = KernelGuard::new(gateway.clone(), kernel, this.inner.pending.clone());
                let _ = guard.delete().await;
            }
        });
        rx.await.map_err(|_| {
            ExecError::Other(format!(
                "Jupyter kernel gateway at {}: starting a kernel: the task ended",
                self.inner.gateway.base()
            ))
        })?
    }

    /// Opens the kernel's channels and executes `code` until it ends or the deadline;
    /// the outcome and how it ended.
    async fn run_kernel(
        &self,
        req: &ExecRequest,
        guard: &KernelGuard,
        code: &str,
    ) -> Result<(ExecOutcome, Ending), ExecError> {
        let gateway = &self.inner.gateway;
        let limits = req.spec.limits;
        let mut ws = channels::open(gateway, guard.id()).await?;
        let request =
            channels::execute_request(code, &format!("{}-execute", req.id), &req.id.to_string());
        let mut stdout = Capture::new(limits.stdout_cap);
        let mut stderr = Capture::new(limits.stderr_cap);
        let started = Instant::now();
        let ended = tokio::time::timeout(
            limits.wall_timeout,
            channels::execute(&mut ws, gateway.base(), request, &mut stdout, &mut stderr),
        )
        .await;
        let wall = started.elapsed();
        let timed_out = ended.is_err();
        let (exit_code, died) = match ended {
            Err(_) => (None, None),
            Ok(Err(e)) => return Err(e),
            Ok(Ok(channels::Ended::Exited(code))) => (Some(code), None),
            Ok(Ok(channels::Ended::Died(state))) => (None, Some(state)),
        };
        // Closing the channels is a courtesy: the kernel's deletion ends them anyway.
        let _ = tokio::time::timeout(Duration::from_secs(1), ws.close(None)).await;
        let mut outcome = skillgate_sandbox::outcome_from(
            ProcessResult {
                exit_code,
                signal: None,
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
        if let Some(state) = died {
            outcome.status = Status::Error;
            outcome.findings.push(Finding::new(
                LayerName::Executor,
                "executor.kernel_died",
                Severity::High,
                format!(
                    "the kernel went `{state}` during the run (os._exit, a crash or a signal): \
                     no exit code, and output it had not flushed is lost"
                ),
            ));
        }
        let ending = if timed_out {
            Ending::TimedOut
        } else if outcome.status == Status::Error {
            Ending::Died
        } else {
            Ending::Replied
        };
        Ok((outcome, ending))
    }
}

/// How a run's execution ended, for the kernel's deletion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// The kernel replied.
    Replied,
    /// The deadline passed.
    TimedOut,
    /// The kernel died (it is restarting).
    Died,
}

impl tower::Service<ExecRequest> for JupyterExecutor {
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
    fn it_claims_the_wall_clock_and_output_caps_only() {
        let exec = JupyterExecutor::new(JupyterSettings::new("http://127.0.0.1:1")).unwrap();
        let caps = exec.capabilities();
        let only = Capabilities {
            executor: "jupyter".into(),
            wall_timeout: true,
            output_caps: true,
            ..Capabilities::none()
        };
        assert_eq!(caps, only);
        // The default spec (network none, limits) is refused, network none among the
        // reasons.
        let missing = caps
            .check(&skillgate_core::SandboxSpec::default())
            .unwrap_err();
        assert!(
            missing.iter().any(|m| m.requirement == "network none"),
            "{missing:?}"
        );
        assert!(
            missing.iter().any(|m| m.requirement == "memory limit"),
            "{missing:?}"
        );
    }

    #[test]
    fn the_token_is_not_in_debug_output() {
        let mut s = JupyterSettings::new("http://127.0.0.1:1");
        s.token = Some("s3cret".into());
        assert!(!format!("{s:?}").contains("s3cret"));
        let exec = JupyterExecutor::new(s).unwrap();
        assert!(!format!("{exec:?}").contains("s3cret"));
    }
}
