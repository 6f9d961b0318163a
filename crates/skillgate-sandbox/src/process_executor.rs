//! The process-tier executor: the supervisor alone, with no isolation.
use crate::artifacts;
use crate::supervisor::{self, ProcessConfig, ProcessResult};
use crate::workdir::{OUTPUT_DIR_ENV, WorkDir};
use skillgate_core::{
    BoxError, Capabilities, ExecError, ExecOutcome, ExecRequest, Finding, LayerName, Limits,
    RuntimeTier, Severity, Status, units,
};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::task::{Context, Poll};

/// Runs skills as plain child processes under the supervisor: wall clock, CPU time, file
/// size, open files and output caps are enforced, nothing is isolated. Only for trusted
/// code; it declares [`RuntimeTier::Process`] so the isolation layer refuses it for
/// anything stronger.
///
/// ```no_run
/// # async fn demo() -> Result<(), skillgate_core::BoxError> {
/// use skillgate_core::{Caller, ExecRequest, Language, Skill};
/// use skillgate_sandbox::ProcessExecutor;
/// use tower::ServiceExt;
/// let skill = Skill::builder("hi", Language::Python, b"print('{}')".to_vec()).build();
/// let req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
/// let out = ProcessExecutor::new().oneshot(req).await?;
/// assert_eq!(out.stdout, b"{}\n");
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default)]
pub struct ProcessExecutor {
    interpreters: Arc<HashMap<skillgate_core::Language, PathBuf>>,
}

impl ProcessExecutor {
    /// An executor that finds interpreters on `PATH`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Uses `program` (a path or command name) for `language`.
    pub fn with_interpreter(
        mut self,
        language: skillgate_core::Language,
        program: impl Into<PathBuf>,
    ) -> Self {
        Arc::make_mut(&mut self.interpreters).insert(language, program.into());
        self
    }

    /// What this executor enforces.
    pub fn capabilities(&self) -> Capabilities {
        Capabilities {
            executor: "process".into(),
            tier: RuntimeTier::Process,
            wall_timeout: true,
            cpu_time: true,
            file_size: true,
            open_files: true,
            output_caps: true,
            clean_env: true,
            workspace: false,
            ..Capabilities::none()
        }
    }

    fn run_blocking(&self, req: &ExecRequest) -> Result<ExecOutcome, ExecError> {
        let skill = &req.skill;
        let interp = crate::interpreter::for_run(
            req,
            self.interpreters.get(&skill.language).map(PathBuf::as_path),
        )?;
        let dir = WorkDir::prepare(skill)?;
        let mut env = req.spec.env.clone();
        env.insert("HOME".into(), dir.work().display().to_string());
        env.insert(OUTPUT_DIR_ENV.into(), dir.out().display().to_string());
        let stdin = serde_json::to_vec(&req.input)
            .map_err(|e| ExecError::Other(format!("serializing the input: {e}")))?;
        let res = supervisor::run(ProcessConfig {
            program: interp.program.clone(),
            args: interp
                .isolation_args()
                .iter()
                .map(std::ffi::OsString::from)
                .chain(std::iter::once(dir.entry().as_os_str().to_owned()))
                .collect(),
            cwd: dir.work(),
            env,
            stdin,
            limits: req.spec.limits,
        })?;
        let (artifacts, mut findings) = artifacts::collect(
            &dir.out(),
            req.spec.limits.artifact_file_cap,
            req.spec.limits.artifact_total_cap,
        );
        let mut outcome = outcome_from(res, &req.spec.limits);
        outcome.artifacts = artifacts;
        outcome.findings.append(&mut findings);
        Ok(outcome)
    }
}

/// Maps how a process ended to a status, with a finding that says why when it is not `ok`.
pub fn outcome_from(res: ProcessResult, limits: &Limits) -> ExecOutcome {
    let finding =
        |rule: &str, msg: String| Finding::new(LayerName::Executor, rule, Severity::High, msg);
    let (status, why) = if res.timed_out {
        (
            Status::Timeout,
            Some(finding(
                "limit.wall_timeout",
                format!(
                    "killed after the {} wall-clock limit",
                    units::format_duration(limits.wall_timeout)
                ),
            )),
        )
    } else if res.signal == Some(libc::SIGXFSZ) {
        (
            Status::ResourceExhausted,
            Some(finding(
                "limit.file_size",
                format!(
                    "wrote past the {} file-size limit",
                    units::format_size(limits.file_size_bytes)
                ),
            )),
        )
    } else if res.signal == Some(libc::SIGXCPU)
        || (res.signal == Some(libc::SIGKILL)
            && limits
                .cpu_time
                .is_some_and(|cpu| res.usage.user_cpu + res.usage.system_cpu >= cpu))
    {
        (
            Status::ResourceExhausted,
            Some(finding(
                "limit.cpu_time",
                "used up its CPU-time limit".into(),
            )),
        )
    } else if res.signal == Some(libc::SIGSYS) {
        (
            Status::SecurityViolation,
            Some(finding(
                "seccomp.kill",
                "killed by the seccomp filter (SIGSYS)".into(),
            )),
        )
    } else if res.stdout_truncated || res.stderr_truncated {
        let which = match (res.stdout_truncated, res.stderr_truncated) {
            (true, true) => "stdout and stderr",
            (true, false) => "stdout",
            _ => "stderr",
        };
        (
            Status::ResourceExhausted,
            Some(finding(
                "limit.output_cap",
                format!("{which} passed the output cap; the rest was dropped"),
            )),
        )
    } else {
        (Status::Ok, None)
    };
    ExecOutcome {
        status,
        exit_code: res.exit_code,
        signal: res.signal,
        stdout: res.stdout,
        stderr: res.stderr,
        stdout_truncated: res.stdout_truncated,
        stderr_truncated: res.stderr_truncated,
        usage: res.usage,
        findings: why.into_iter().collect(),
        ..ExecOutcome::default()
    }
}

impl tower::Service<ExecRequest> for ProcessExecutor {
    type Response = ExecOutcome;
    type Error = BoxError;
    type Future = crate::blocking::ExecFuture;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: ExecRequest) -> Self::Future {
        let this = self.clone();
        crate::blocking::on_blocking_pool(move || this.run_blocking(&req))
    }
}
