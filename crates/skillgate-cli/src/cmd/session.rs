//! `skillgate session`: a workspace kept as an append-only log (`skillgate-session`),
//! each step a pipeline run in a sandbox brought to the state the log describes.
use crate::UsageError;
use crate::render::{self, Format};
use clap::{Args, Subcommand};
use skillgate::{Language, Report, units};
use skillgate_session::{
    Owner, ParkingLot, SessionError, Sessions, Settings as SessionSettings, StepSpec,
};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Most bytes of a step's script.
const MAX_CODE_BYTES: u64 = 1024 * 1024;

#[derive(Debug, Args)]
pub(crate) struct SessionArgs {
    #[command(subcommand)]
    command: SessionCommand,
    /// The config file (skillgate.toml): its pipeline runs every step, its `[store] url`
    /// (PostgreSQL) keeps the sessions, else SQLite in the state directory.
    #[arg(long, value_name = "FILE", global = true)]
    config: Option<PathBuf>,
    /// The state directory (default `[monitor] state_dir`, else
    /// `$XDG_STATE_HOME/skillgate` or `~/.local/state/skillgate`).
    #[arg(long, value_name = "DIR", global = true)]
    state_dir: Option<PathBuf>,
    /// The calling agent's id (a session is used only by the agent that created it).
    #[arg(long, value_name = "ID", default_value = "local-agent", global = true)]
    agent: String,
    /// The calling agent's tenant, only for an agent the entities file does not declare.
    #[arg(long, value_name = "ID", global = true)]
    tenant: Option<String>,
    /// Output format: text or json.
    #[arg(long, value_enum, default_value_t = Format::Text, global = true)]
    format: Format,
    /// Take a snapshot after this many steps. Each command is a process of its own: it
    /// continues the workspace the previous command parked, and where it cannot (a step
    /// killed mid-way, an eviction, a restart) restores the newest snapshot and replays
    /// the steps after it, so the default is 2: at most one step replayed before a new
    /// one (benches/sessions.sh).
    #[arg(long, value_name = "N", default_value_t = 2, global = true)]
    snapshot_every: u32,
    /// How long to wait for a session another process is using before giving up (busy).
    #[arg(long, value_name = "DURATION", value_parser = units::parse_duration, default_value = "5s", global = true)]
    lock_wait: Duration,
}

#[derive(Debug, Subcommand)]
enum SessionCommand {
    /// Create a session; prints its id.
    New,
    /// Run a step (a script, or a shell command line) in the session's workspace and
    /// record it.
    Exec {
        /// The session id.
        id: String,
        /// The script.
        #[arg(
            long,
            value_name = "FILE",
            required_unless_present = "sh",
            requires = "lang"
        )]
        code: Option<PathBuf>,
        /// Its language (python or javascript).
        #[arg(long, value_parser = parse_lang, requires = "code")]
        lang: Option<Language>,
        /// A shell command line instead of a script, run by dash (/bin/sh). Authorised with the
        /// Cedar action `run_command`, which no default policy grants, and pre-scanned
        /// against the shell command allow-list (rules/prescan/shell/).
        #[arg(long, value_name = "CMD", conflicts_with_all = ["code", "lang", "runtime"])]
        sh: Option<String>,
        /// The input JSON (default `{}`).
        #[arg(long, value_name = "JSON")]
        input: Option<String>,
        /// The working directory, relative to the workspace.
        #[arg(long, value_name = "DIR", default_value = "")]
        cwd: String,
        /// The step's outcome cannot be repeated (network, clock): a snapshot is taken
        /// right after it, so a restore does not run it again.
        #[arg(long)]
        non_replayable: bool,
        /// An environment variable for the step, NAME=VALUE (repeatable; names on the
        /// step allow-list only: TZ, LC_ALL, ...; recorded in the log with the step).
        #[arg(long = "env", value_name = "NAME=VALUE", value_parser = parse_env)]
        env: Vec<(String, String)>,
        /// The named runtime it runs on (`python-data`; see `skillgate runtime list`),
        /// instead of the language's default.
        #[arg(long, value_name = "NAME")]
        runtime: Option<String>,
        /// Wall-clock limit, clamped to `[isolation.max]`.
        #[arg(long, value_name = "DURATION", value_parser = units::parse_duration)]
        timeout: Option<Duration>,
        /// Memory limit, clamped to `[isolation.max]`.
        #[arg(long, value_name = "SIZE", value_parser = units::parse_size)]
        memory: Option<u64>,
    },
    /// Add a local file to the workspace (recorded now, written at the next step).
    Upload {
        /// The session id.
        id: String,
        /// The file to upload.
        local_file: PathBuf,
        /// Where it goes, relative to the workspace.
        path: String,
        /// Its permission bits, in octal.
        #[arg(long, default_value = "644", value_parser = parse_mode)]
        mode: u32,
    },
    /// Read a file of the workspace (from the latest snapshot).
    Download {
        /// The session id.
        id: String,
        /// The file, relative to the workspace.
        path: String,
        /// Write it here instead of stdout.
        #[arg(short = 'o', long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Print the session's log.
    Log {
        /// The session id.
        id: String,
    },
    /// Rebuild the workspace from the nearest snapshot (or from nothing: --cold) and
    /// report the first step whose replay differs from its record.
    Replay {
        /// The session id.
        id: String,
        /// Replay the whole log from an empty workspace.
        #[arg(long)]
        cold: bool,
    },
    /// Remove a session and its log.
    Rm {
        /// The session id.
        id: String,
    },
    /// Drop old snapshots and the blobs no session references.
    Gc,
}

fn parse_lang(s: &str) -> Result<Language, String> {
    s.parse()
}

/// The text of a step's script, refused over [`MAX_CODE_BYTES`].
fn read_script(code: &Path) -> Result<String, UsageError> {
    let len = std::fs::metadata(code)
        .map_err(|e| format!("cannot read {}: {e}", code.display()))?
        .len();
    if len > MAX_CODE_BYTES {
        return Err(UsageError(format!(
            "{} is {len} bytes, over the {MAX_CODE_BYTES} byte limit",
            code.display()
        )));
    }
    Ok(std::fs::read_to_string(code)
        .map_err(|e| format!("cannot read {} as UTF-8 text: {e}", code.display()))?)
}

fn parse_env(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .filter(|(name, _)| !name.is_empty())
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .ok_or_else(|| format!("`{s}` is not NAME=VALUE"))
}

fn parse_mode(s: &str) -> Result<u32, String> {
    u32::from_str_radix(s, 8)
        .ok()
        .filter(|m| *m <= 0o777)
        .ok_or_else(|| format!("`{s}` is not a mode (octal, at most 777)"))
}

fn session_error(e: SessionError) -> UsageError {
    UsageError(e.to_string())
}

fn print_json(v: &serde_json::Value) {
    println!(
        "{}",
        serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
    );
}

pub(crate) fn run(args: SessionArgs) -> Result<ExitCode, UsageError> {
    let settings = skillgate_server::Settings {
        config: args.config.clone(),
        state_dir: args.state_dir.clone(),
    };
    let config = settings.load()?;
    let state_dir = settings.state_dir(&config)?;
    let store = skillgate_session::open_store(&config.store, &state_dir)?;
    let configured = SessionSettings::from_config(&config)
        .map_err(|e| UsageError(format!("invalid config: {e}")))?;
    let engine = Arc::new(skillgate::Engine::new(config, &[])?);
    for notice in engine.notices() {
        anstream::eprintln!("warning: {notice}");
    }
    let tenant = engine
        .tenant_of(&args.agent, args.tenant.as_deref())
        .map_err(|e| UsageError(format!("{e} (--tenant)")))?;
    let owner = Owner {
        tenant,
        agent: args.agent.clone(),
    };
    let session_settings = SessionSettings {
        snapshot_every: args.snapshot_every,
        lock_wait: args.lock_wait,
        ..configured
    };
    // Each command is a process: a session's workspace stays mounted in the state
    // directory between them, so the next step continues it instead of restoring it.
    let lot = ParkingLot::new(
        state_dir.join("session-workspaces"),
        session_settings.max_warm,
    );
    let sessions = Sessions::native_parked(
        store,
        session_settings,
        Arc::new(move || engine.clone()),
        skillgate_session::DEFAULT_WORKSPACE_BYTES,
        lot.clone(),
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let format = args.format;
    match args.command {
        SessionCommand::New => {
            let s = sessions.create(&owner).map_err(session_error)?;
            match format {
                Format::Json => print_json(&serde_json::to_value(&s)?),
                Format::Text => println!("{}", s.id),
            }
            Ok(ExitCode::SUCCESS)
        }
        SessionCommand::Exec {
            id,
            code,
            lang,
            sh,
            input,
            cwd,
            non_replayable,
            env,
            runtime,
            timeout,
            memory,
        } => {
            let (lang, text) = match (sh, code, lang) {
                (Some(cmd), _, _) => {
                    if cmd.len() as u64 > MAX_CODE_BYTES {
                        return Err(UsageError(format!(
                            "--sh is {} bytes, over the {MAX_CODE_BYTES} byte limit",
                            cmd.len()
                        )));
                    }
                    (Language::Shell, cmd)
                }
                (None, Some(code), Some(lang)) => (lang, read_script(&code)?),
                _ => {
                    return Err(UsageError(
                        "give a script (--code FILE --lang L) or a shell command line (--sh 'CMD')"
                            .into(),
                    ));
                }
            };
            let input = match input {
                Some(s) => serde_json::from_str(&s)
                    .map_err(|e| format!("--input is not valid JSON: {e}"))?,
                None => serde_json::json!({}),
            };
            let spec = StepSpec {
                language: lang,
                code: text,
                input,
                cwd,
                limits: skillgate::LimitOverrides {
                    wall_timeout: timeout,
                    memory_bytes: memory,
                    ..Default::default()
                },
                replayable: !non_replayable,
                runtime,
                env: env.into_iter().collect(),
            };
            let started = Instant::now();
            let r = rt
                .block_on(sessions.exec(&owner, &id, spec))
                .map_err(session_error)?;
            let report = Report::new(&r.outcome, started.elapsed());
            match format {
                Format::Json => print_json(&r.to_json(&id, &report)),
                Format::Text => {
                    render::print_report(&report, format);
                    match &r.event {
                        Some(e) => anstream::eprintln!("session {id}: recorded as event {}", e.seq),
                        None => anstream::eprintln!(
                            "session {id}: the step did not run; nothing recorded"
                        ),
                    }
                    if let Some(d) = &r.restored.divergence {
                        anstream::eprintln!(
                            "warning: replaying step {} gave a different {} than recorded",
                            d.seq,
                            d.what
                        );
                    }
                }
            }
            Ok(if report.status.is_ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        SessionCommand::Upload {
            id,
            local_file,
            path,
            mode,
        } => {
            let bytes = std::fs::read(&local_file)
                .map_err(|e| format!("cannot read {}: {e}", local_file.display()))?;
            let e = sessions
                .upload(&owner, &id, &path, &bytes, mode)
                .map_err(session_error)?;
            match format {
                Format::Json => print_json(&serde_json::to_value(&e)?),
                Format::Text => println!("event {}: upload {path} ({} bytes)", e.seq, bytes.len()),
            }
            Ok(ExitCode::SUCCESS)
        }
        SessionCommand::Download { id, path, output } => {
            let bytes = rt
                .block_on(sessions.download(&owner, &id, &path))
                .map_err(session_error)?
                .ok_or_else(|| UsageError(format!("session {id} has no file `{path}`")))?;
            match output {
                Some(file) => std::fs::write(&file, &bytes)
                    .map_err(|e| format!("cannot write {}: {e}", file.display()))?,
                None => {
                    use std::io::Write;
                    std::io::stdout()
                        .write_all(&bytes)
                        .map_err(|e| format!("cannot write to stdout: {e}"))?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        SessionCommand::Log { id } => {
            let events = sessions.log(&owner, &id).map_err(session_error)?;
            match format {
                Format::Json => print_json(&serde_json::to_value(&events)?),
                Format::Text => {
                    for e in &events {
                        println!("{}", describe(e));
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        SessionCommand::Replay { id, cold } => {
            let r = rt
                .block_on(sessions.replay(&owner, &id, cold))
                .map_err(session_error)?;
            match format {
                Format::Json => print_json(&serde_json::to_value(&r)?),
                Format::Text => {
                    let from = r.restored.snapshot.map_or_else(
                        || "an empty workspace".to_string(),
                        |s| format!("the snapshot at event {s}"),
                    );
                    println!(
                        "replayed {} events from {from}; workspace {}",
                        r.restored.replayed, r.workspace_digest
                    );
                    match &r.restored.divergence {
                        Some(d) => println!(
                            "diverged at step {}: {} recorded {} replayed {}",
                            d.seq, d.what, d.recorded, d.replayed
                        ),
                        None => println!("no divergence"),
                    }
                }
            }
            Ok(if r.restored.divergence.is_none() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        SessionCommand::Rm { id } => {
            let removed = sessions.remove(&owner, &id).map_err(session_error)?;
            if removed {
                lot.evict(&id)
                    .map_err(|e| format!("removing the workspace of session {id}: {e}"))?;
            }
            Ok(if removed {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        SessionCommand::Gc => {
            let r = sessions.gc().map_err(session_error)?;
            let store = sessions.store();
            let parked = lot
                .sweep(|id| !matches!(store.session(id), Ok(None)))
                .map_err(|e| format!("removing the workspaces of removed sessions: {e}"))?;
            let workspaces = parked
                + skillgate_session::reclaim_stale_workspaces()
                    .map_err(|e| format!("reclaiming the workspaces of dead processes: {e}"))?;
            match format {
                Format::Json => print_json(&serde_json::json!({
                    "snapshots": r.snapshots,
                    "blobs": r.blobs,
                    "bytes": r.bytes,
                    "workspaces": workspaces,
                })),
                Format::Text => println!(
                    "removed {} snapshots, {} blobs ({} bytes) and {workspaces} workspaces (of removed sessions and dead processes)",
                    r.snapshots, r.blobs, r.bytes
                ),
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// One line of `session log`.
fn describe(e: &skillgate_session::Event) -> String {
    use skillgate_session::EventKind;
    match &e.kind {
        EventKind::Step(s) => format!(
            "{:>5}  step    {} exit {} {} ms  {}",
            e.seq,
            s.result.status,
            s.result
                .exit_code
                .map_or_else(|| "-".to_string(), |c| c.to_string()),
            s.result.duration_ms,
            s.spec.language
        ),
        EventKind::Upload(u) => format!(
            "{:>5}  upload  {} ({} bytes, mode {:o})",
            e.seq, u.path, u.size, u.mode
        ),
        EventKind::SkillMount(m) => format!("{:>5}  mount   {} ({})", e.seq, m.skill, m.version),
    }
}
