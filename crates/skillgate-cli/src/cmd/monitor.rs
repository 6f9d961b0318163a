//! `skillgate monitor`: the behavioural monitor's state (status, release, metrics).
use crate::UsageError;
use crate::render::Format;
use clap::{Args, Subcommand};
use skillgate::Config;
use skillgate_monitor::baseline::Metric;
use skillgate_monitor::signals::now_ms;
use skillgate_monitor::{AgentStatus, DB_FILE, Store, audit};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub(crate) struct MonitorArgs {
    #[command(subcommand)]
    command: MonitorCommand,
    /// The monitor's state directory (default: `[monitor] state_dir`, else
    /// `$XDG_STATE_HOME/skillgate` or `~/.local/state/skillgate`).
    #[arg(long, value_name = "DIR", global = true)]
    state_dir: Option<PathBuf>,
    /// The config file (skillgate.toml), for `[monitor]`.
    #[arg(long, value_name = "FILE", global = true)]
    config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum MonitorCommand {
    /// Agents, quarantines, throttles and baselines.
    Status {
        /// One agent in detail.
        #[arg(long, value_name = "ID")]
        agent: Option<String>,
        /// The agent's tenant, only for an agent the entities file does not declare.
        #[arg(long, value_name = "ID")]
        tenant: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Lift an agent's quarantine (recorded in the audit trail). Exit 1 when it was not quarantined.
    Release {
        /// The agent.
        #[arg(long, value_name = "ID")]
        agent: String,
        /// The agent's tenant, only for an agent the entities file does not declare.
        #[arg(long, value_name = "ID")]
        tenant: Option<String>,
        /// Who releases it (default: $USER).
        #[arg(long, value_name = "NAME")]
        by: Option<String>,
    },
    /// Prometheus text exposition of the monitor's metrics.
    Metrics,
}

fn open(args: &MonitorArgs) -> Result<(Store, Config), UsageError> {
    let config = match &args.config {
        Some(p) => Config::load(p)?,
        None => Config::default(),
    };
    let dir = match args.state_dir.clone().or(config.monitor.state_dir.clone()) {
        Some(d) => d,
        None => skillgate_monitor::default_state_dir()?,
    };
    if !dir.join(DB_FILE).is_file() {
        return Err(UsageError(format!(
            "no monitor state in {} (nothing has run with this state directory yet)",
            dir.display()
        )));
    }
    Ok((Store::open(&dir, config.monitor.durability)?, config))
}

/// The tenant of `agent`: the one the config's entities file (`[policy] entities`) gives
/// it, as `skillgate run` decides it; `claimed` only for an agent the file does not declare.
fn agent_tenant(config: &Config, agent: &str, claimed: Option<&str>) -> Result<String, UsageError> {
    let policy = match &config.policy.entities {
        Some(_) => Some(skillgate_policy::Policy::load(&config.policy)?),
        None => None,
    };
    crate::cmd::policy::caller_tenant(policy.as_ref(), agent, claimed)
}

pub(crate) fn run(args: MonitorArgs) -> Result<ExitCode, UsageError> {
    let (store, config) = open(&args)?;
    let now = now_ms();
    let strikes_since = now - config.monitor.strike_window.as_millis() as i64;
    let mut out = anstream::stdout().lock();
    match args.command {
        MonitorCommand::Metrics => {
            let text = skillgate_monitor::metrics::render(&store, now)?;
            let _ = out.write_all(text.as_bytes());
            Ok(ExitCode::SUCCESS)
        }
        MonitorCommand::Release { agent, tenant, by } => {
            let tenant = agent_tenant(&config, &agent, tenant.as_deref())?;
            let by = by
                .or_else(|| std::env::var("USER").ok())
                .unwrap_or_else(|| "unknown".into());
            match store.release(&tenant, &agent, &by, now)? {
                Some(entry) => {
                    let _ = writeln!(
                        out,
                        "released {tenant}/{agent} (quarantined since {}: {}); recorded in the audit trail",
                        audit::rfc3339(entry.since_ms),
                        entry.reason
                    );
                    Ok(ExitCode::SUCCESS)
                }
                None => {
                    let _ = writeln!(
                        out,
                        "{tenant}/{agent} is not quarantined; nothing to release"
                    );
                    Ok(ExitCode::from(1))
                }
            }
        }
        MonitorCommand::Status {
            agent,
            tenant,
            format,
        } => {
            let statuses: Vec<AgentStatus> = match &agent {
                Some(a) => {
                    let tenant = agent_tenant(&config, a, tenant.as_deref())?;
                    vec![store.agent_status(&tenant, a, now, strikes_since)?]
                }
                None => store
                    .agents()?
                    .iter()
                    .map(|(t, a)| store.agent_status(t, a, now, strikes_since))
                    .collect::<Result<_, _>>()?,
            };
            let _ = match format {
                Format::Json => serde_json::to_writer_pretty(&mut out, &statuses)
                    .map_err(std::io::Error::other)
                    .and_then(|_| writeln!(out)),
                Format::Text => write_status(&mut out, &statuses, agent.is_some()),
            };
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn write_status(
    out: &mut impl Write,
    statuses: &[AgentStatus],
    detail: bool,
) -> std::io::Result<()> {
    if statuses.is_empty() {
        return writeln!(out, "no agents recorded yet");
    }
    for s in statuses {
        let total: u64 = s.executions.iter().map(|(_, n)| n).sum();
        let state = match (&s.quarantine, s.throttled_until_ms) {
            (Some(q), _) => format!(
                "QUARANTINED since {} ({})",
                audit::rfc3339(q.since_ms),
                q.reason
            ),
            (None, Some(u)) => format!("throttled until {}", audit::rfc3339(u)),
            (None, None) => "ok".into(),
        };
        writeln!(
            out,
            "{}/{}: {state}; {total} executions, {} anomalous, {} strikes",
            s.tenant, s.agent, s.anomalous, s.strikes
        )?;
        if detail {
            let by: Vec<String> = s
                .executions
                .iter()
                .map(|(st, n)| format!("{st} {n}"))
                .collect();
            writeln!(out, "  by status: {}", by.join(", "))?;
            for (skill, b) in &s.baselines {
                let parts: Vec<String> = Metric::ALL
                    .iter()
                    .map(|&m| {
                        let e = b.get(m);
                        format!("{} {} ±{}", m.label(), m.format(e.mean), m.format(e.sd()))
                    })
                    .collect();
                writeln!(
                    out,
                    "  baseline {skill} ({} runs): {}",
                    b.wall.n,
                    parts.join("; ")
                )?;
            }
        }
    }
    Ok(())
}
