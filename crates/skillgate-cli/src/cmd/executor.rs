//! `skillgate executor check`: the conformance kit against the executor the config
//! selects, one line per check; exit 0 only when every capability it claims holds.
use crate::UsageError;
use clap::{Args, Subcommand};
use skillgate::assemble::{
    docker_executor, jupyter_executor, kubernetes_executor, native_sandbox, oci_executor,
};
use skillgate::config::ExecutorKind;
use skillgate::runtimes::Runtimes;
use skillgate::{Config, Language, Skill};
use skillgate_executors::conformance::{Kit, Leftovers, Report};
use skillgate_sandbox::ProcessExecutor;
use std::path::PathBuf;
use std::process::ExitCode;

/// `skillgate executor ...`.
#[derive(Debug, Subcommand)]
pub(crate) enum ExecutorCommand {
    /// Run the conformance kit against the configured executor: one line per check
    /// (`ok`, `FAIL` with the reason, or `not claimed`). Exit 0 when every check of a
    /// claimed capability passes, 1 when one fails.
    Check(CheckArgs),
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The config file (skillgate.toml): its `[executor]`, `[interpreters]` and
    /// `[runtimes] python` (the kit's skills run on that runtime when it is set).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

pub(crate) fn run(cmd: ExecutorCommand) -> Result<ExitCode, UsageError> {
    let ExecutorCommand::Check(args) = cmd;
    let config = Config::load_or_default(args.config.as_deref())?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let report = rt.block_on(check(&config))?;
    print!("{report}");
    Ok(if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The kit for `config`'s executor, on the config's Python runtime when it names one.
fn kit_for(config: &Config, capabilities: skillgate::Capabilities) -> Result<Kit, UsageError> {
    let mut kit = Kit::new(capabilities);
    let runtimes = Runtimes::from_config(config).map_err(UsageError)?;
    let probe = Skill::builder("conformance", Language::Python, Vec::new()).build();
    if let Some(installed) = runtimes.for_skill(&probe).map_err(UsageError)? {
        kit.spec.interpreter = Some(installed.interpreter.clone());
        kit.spec
            .read_only_paths
            .extend(installed.read_only.iter().cloned());
        kit.runtime = Some(installed.name.clone());
    }
    Ok(kit)
}

fn probe<F, Fut>(f: F) -> Leftovers
where
    F: Fn(Vec<String>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Vec<String>, String>> + Send + 'static,
{
    Box::new(move |ids| Box::pin(f(ids)))
}

async fn check(config: &Config) -> Result<Report, UsageError> {
    let report = match config.executor.kind {
        ExecutorKind::Native => {
            let exec = native_sandbox(config);
            kit_for(config, exec.capabilities())?.run(exec).await
        }
        ExecutorKind::Process => {
            let mut exec = ProcessExecutor::new();
            if let Some(p) = &config.interpreters.python {
                exec = exec.with_interpreter(Language::Python, p);
            }
            kit_for(config, exec.capabilities())?.run(exec).await
        }
        ExecutorKind::Docker => {
            let exec = docker_executor(config)?;
            exec.engine_flavour().await?;
            let mut kit = kit_for(config, exec.capabilities())?;
            let p = exec.clone();
            kit.leftovers = Some(probe(move |ids| {
                let p = p.clone();
                async move { p.leftovers(&ids).await.map_err(|e| e.to_string()) }
            }));
            kit.run(exec).await
        }
        ExecutorKind::Oci => {
            let exec = oci_executor(config)?;
            let mut kit = kit_for(config, exec.capabilities())?;
            let p = exec.clone();
            kit.leftovers = Some(probe(move |ids| {
                let p = p.clone();
                async move { p.leftovers(&ids).await.map_err(|e| e.to_string()) }
            }));
            kit.run(exec).await
        }
        ExecutorKind::Jupyter => {
            // A kernel runs the gateway's own Python (no named runtime) and returns no
            // output files.
            let exec = jupyter_executor(config)?;
            let mut kit = Kit::new(exec.capabilities());
            kit.returns_artifacts = false;
            let p = exec.clone();
            kit.leftovers = Some(probe(move |ids| {
                let p = p.clone();
                async move { p.leftovers(&ids).await.map_err(|e| e.to_string()) }
            }));
            kit.run(exec).await
        }
        ExecutorKind::Kubernetes => {
            // The kit's subset for pods: its process limit (16) is stricter than any
            // node's podPidsLimit the executor accepts, and a pod always has an interface;
            // both are the cluster's, stated in the config (node_pids_limit,
            // egress_enforced), not the executor's to show here.
            let exec = kubernetes_executor(config)?;
            let mut claims = exec.capabilities();
            claims.pids = false;
            claims.network_none = false;
            let mut kit = kit_for(config, claims)?;
            let p = exec.clone();
            kit.leftovers = Some(probe(move |ids| {
                let p = p.clone();
                async move { p.leftovers(&ids).await.map_err(|e| e.to_string()) }
            }));
            kit.run(exec).await
        }
    };
    Ok(report)
}
