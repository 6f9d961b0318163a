//! `skillgate mcp`: an MCP server over stdio for one agent; every skill folder under
//! `--skills` the agent may run is a tool, and every tool call is a pipeline run.
use crate::UsageError;
use clap::Args;
use skillgate::{Caller, Config};
use skillgate_mcp::watch::POLL_INTERVAL;
use skillgate_mcp::{FolderSource, Gateway, SkillSource};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// The config file (skillgate.toml).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The agent the client acts as: it sees and runs the skills the policy lets it.
    #[arg(long, value_name = "ID")]
    agent: String,
    /// The agent's tenant, only for an agent the entities file does not declare (the file
    /// decides a declared agent's tenant; a --tenant that disagrees is refused).
    #[arg(long, value_name = "ID")]
    tenant: Option<String>,
    /// A folder of skill folders (or one skill folder); repeatable. Read again at every
    /// call, so a skill added, changed or removed is served as it is now; checked every
    /// 2 s, and the client is told when its tools change (so are the policy files, which
    /// are loaded again when they change). The registry `serve` publishes to (in the state
    /// directory, or `[store] url`) is served too.
    #[arg(long, value_name = "DIR")]
    skills: Vec<PathBuf>,
    #[command(flatten)]
    policy_files: crate::cmd::policy::PolicyFileArgs,
    /// The monitor's state directory (baselines, quarantines, audit.jsonl); default
    /// `[monitor] state_dir`, else `$XDG_STATE_HOME/skillgate` or `~/.local/state/skillgate`.
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
}

pub(crate) fn run(args: McpArgs) -> Result<ExitCode, UsageError> {
    // stdout carries the protocol: every log line goes to stderr.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .try_init();
    let mut config = Config::load_or_default(args.config.as_deref())?;
    args.policy_files.apply(&mut config.policy);
    if let Some(dir) = &args.state_dir {
        config.monitor.state_dir = Some(dir.clone());
    }
    for dir in &args.skills {
        if !dir.is_dir() {
            return Err(UsageError(format!(
                "--skills {}: no such directory",
                dir.display()
            )));
        }
    }
    // The registry `serve` keeps (the state directory's store, or `[store] url`): its
    // skills are tools too, and its versions catalogue records for the policy gate.
    let state_dir = skillgate_monitor::resolve_state_dir(&config.monitor, None)
        .map_err(|e| UsageError(e.to_string()))?;
    let store: Arc<dyn skillgate_store::Store> = config
        .store
        .open(&state_dir)
        .map_err(|e| UsageError(format!("the registry cannot be opened: {e}")))?
        .into();
    let config =
        skillgate_server::state::with_registry_catalogue(config, &state_dir, store.as_ref())
            .map_err(UsageError)?;
    let engine = skillgate::Engine::new(config, &[])?;
    for notice in engine.notices() {
        anstream::eprintln!("warning: {notice}");
    }
    let tenant = engine
        .tenant_of(&args.agent, args.tenant.as_deref())
        .map_err(|e| UsageError(format!("{e} (--tenant)")))?;
    let config = engine.config().clone();
    // The registry's versions are offered once the gate records them (the catalogue file
    // `serve` rewrites at each publish is among the policy files the poll reloads).
    let gate: Arc<std::sync::OnceLock<std::sync::Weak<Gateway>>> = Arc::default();
    let recorded_by = gate.clone();
    let recorded: skillgate_server::mcp::Recorded = Arc::new(move |digest: &str| {
        recorded_by
            .get()
            .and_then(std::sync::Weak::upgrade)
            .and_then(|g| g.engine().ok())
            .is_some_and(|e| skillgate_server::state::knows(&e, digest))
    });
    let sources: Vec<Arc<dyn SkillSource>> = vec![
        Arc::new(FolderSource::new(args.skills)),
        Arc::new(skillgate_server::mcp::StoreSource::new(store, recorded)),
    ];
    let gateway = Arc::new(Gateway::new(Arc::new(engine), sources));
    let _ = gate.set(Arc::downgrade(&gateway));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    rt.block_on(async {
        // The skills and the policy files are polled: a change is announced to the client.
        let watcher =
            skillgate_mcp::watch::watch(gateway.clone(), config, Vec::new(), POLL_INTERVAL);
        let served = skillgate_mcp::serve_stdio(gateway, Caller::new(&args.agent, tenant)).await;
        watcher.abort();
        served
    })
    .map_err(|e| UsageError(format!("the MCP session failed: {e}")))?;
    Ok(ExitCode::SUCCESS)
}
