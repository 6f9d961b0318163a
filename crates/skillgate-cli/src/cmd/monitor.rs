//! `skillgate monitor`: the behavioural monitor's state (status, release, metrics).
use crate::UsageError;
use crate::render::Format;
use clap::{Args, Subcommand};
use skillgate::Config;
use skillgate_monitor::baseline::Metric;
use skillgate_monitor::signals::now_ms;
use skillgate_monitor::{AgentStatus, MonitorState, PgState, SkillFlag, Store, audit};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub(crate) struct MonitorArgs {
    #[command(subcommand)]
    command: MonitorCommand,
    /// The monitor's state directory (default: `[monitor] state_dir`, else
    /// `$XDG_STATE_HOME/skillgate` or `~/.local/state/skillgate`). Not used with `[store]
    /// url`: the database holds the state every replica shares.
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
    /// Lift an agent's quarantine, or clear a skill's flag (recorded in the audit trail).
    /// Exit 1 when there was nothing to lift.
    Release {
        /// The agent (quarantines are keyed by agent id, whatever its tenant).
        #[arg(
            long,
            value_name = "ID",
            required_unless_present = "skill",
            conflicts_with = "skill"
        )]
        agent: Option<String>,
        /// The flagged skill's code digest (sha256 hex, as `monitor status` lists it).
        #[arg(long, value_name = "DIGEST")]
        skill: Option<String>,
        /// Who releases it (default: $USER).
        #[arg(long, value_name = "NAME")]
        by: Option<String>,
    },
    /// Skills flagged because their own schema or code keeps blocking their callers.
    Skills {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        format: Format,
    },
    /// Prometheus text exposition of the monitor's metrics.
    Metrics,
}

/// The monitor's state the runs use: the PostgreSQL database of `[store] url` (shared by
/// every replica), else the state directory.
fn open(args: &MonitorArgs) -> Result<(Box<dyn MonitorState>, Config), UsageError> {
    let config = Config::load_or_default(args.config.as_deref())?;
    if let Some(url) = &config.store.url {
        return Ok((Box::new(PgState::open(url)?), config));
    }
    let dir = skillgate_monitor::resolve_state_dir(&config.monitor, args.state_dir.as_deref())?;
    match Store::open_existing(&dir, config.monitor.durability)? {
        Some(store) => Ok((Box::new(store), config)),
        None => Err(UsageError(format!(
            "no monitor state in {} (nothing has run with this state directory yet)",
            dir.display()
        ))),
    }
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
            let text = skillgate_monitor::metrics::render_state(&*store, now)?;
            let _ = out.write_all(text.as_bytes());
            Ok(ExitCode::SUCCESS)
        }
        MonitorCommand::Release { agent, skill, by } => {
            let by = by
                .or_else(|| std::env::var("USER").ok())
                .unwrap_or_else(|| "unknown".into());
            let done = match (agent, skill) {
                (Some(agent), _) => match store.release(&agent, &by, now)? {
                    Some(entry) => writeln!(
                        out,
                        "released {}/{agent} (quarantined since {}: {}); recorded in the audit trail",
                        entry.tenant,
                        audit::rfc3339(entry.since_ms),
                        entry.reason
                    )
                    .map(|_| true),
                    None => {
                        writeln!(out, "agent {agent} is not quarantined; nothing to release")
                            .map(|_| false)
                    }
                },
                (None, Some(digest)) => match store.unflag_skill(&digest, &by, now)? {
                    Some(flag) => writeln!(
                        out,
                        "cleared the flag of skill {} ({digest}, flagged since {}: {}); recorded in the audit trail",
                        flag.skill,
                        audit::rfc3339(flag.since_ms),
                        flag.reason
                    )
                    .map(|_| true),
                    None => writeln!(out, "skill {digest} is not flagged; nothing to clear")
                        .map(|_| false),
                },
                (None, None) => return Err(UsageError("give --agent ID or --skill DIGEST".into())),
            };
            Ok(if done.unwrap_or(false) {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
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
            let flagged = store.flagged_skills()?;
            let _ = match format {
                Format::Json => serde_json::to_writer_pretty(&mut out, &statuses)
                    .map_err(std::io::Error::other)
                    .and_then(|_| writeln!(out)),
                Format::Text => write_status(&mut out, &statuses, agent.is_some()).and_then(|_| {
                    if agent.is_some() {
                        return Ok(());
                    }
                    write_flagged(&mut out, &flagged)
                }),
            };
            Ok(ExitCode::SUCCESS)
        }
        MonitorCommand::Skills { format } => {
            let flagged = store.flagged_skills()?;
            let _ = match format {
                Format::Json => serde_json::to_writer_pretty(&mut out, &flagged)
                    .map_err(std::io::Error::other)
                    .and_then(|_| writeln!(out)),
                Format::Text if flagged.is_empty() => writeln!(out, "no flagged skills"),
                Format::Text => write_flagged(&mut out, &flagged),
            };
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn write_flagged(out: &mut impl Write, flagged: &[SkillFlag]) -> std::io::Result<()> {
    for f in flagged {
        writeln!(
            out,
            "skill {} ({}): FLAGGED since {} ({})",
            f.skill,
            f.digest,
            audit::rfc3339(f.since_ms),
            f.reason
        )?;
    }
    Ok(())
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
