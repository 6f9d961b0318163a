//! `skillgate run`.
use crate::UsageError;
use crate::render::{self, Format};
use clap::Args;
use skillgate::{Caller, Config, Language, LayerName, Report, Skill, skill_dir, units};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Most bytes of input JSON accepted.
const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// The skill folder (with SKILL.md).
    #[arg(
        value_name = "SKILL_DIR",
        required_unless_present = "code",
        conflicts_with = "code"
    )]
    skill_dir: Option<PathBuf>,
    /// A bare script to run instead of a skill folder (needs --lang).
    #[arg(long, value_name = "FILE", requires = "lang")]
    code: Option<PathBuf>,
    /// Language of --code.
    #[arg(long, value_parser = parse_lang)]
    lang: Option<Language>,
    /// The input JSON (default `{}`).
    #[arg(long, value_name = "JSON", conflicts_with = "input_file")]
    input: Option<String>,
    /// A file holding the input JSON (`-` for stdin).
    #[arg(long, value_name = "PATH")]
    input_file: Option<PathBuf>,
    /// The calling agent's id.
    #[arg(long, value_name = "ID", default_value = "local-agent")]
    agent: String,
    /// The calling agent's tenant, only for an agent the entities file does not declare
    /// (the file decides a declared agent's tenant; a --tenant that disagrees is refused).
    #[arg(long, value_name = "ID")]
    tenant: Option<String>,
    /// The config file (skillgate.toml).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    policy_files: crate::cmd::policy::PolicyFileArgs,
    /// Switch a layer off (policy, prescan, isolation, seccomp, network, secrets, monitor); for testing one layer without another.
    #[arg(long, value_name = "LAYER", value_parser = parse_layer)]
    disable: Vec<LayerName>,
    /// Wall-clock limit, e.g. `5s`, `500ms`; clamped to `[isolation.max]` (by default the
    /// `[limits]` value).
    #[arg(long, value_name = "DURATION", value_parser = units::parse_duration)]
    timeout: Option<Duration>,
    /// Memory limit, e.g. `256MiB`; clamped to `[isolation.max]` (by default the
    /// `[limits]` value).
    #[arg(long, value_name = "SIZE", value_parser = units::parse_size)]
    memory: Option<u64>,
    /// Report format: text (status, exit code, time, output, findings) or json (one report object).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// The monitor's state directory (baselines, quarantines, audit.jsonl); default
    /// `[monitor] state_dir`, else `$XDG_STATE_HOME/skillgate` or `~/.local/state/skillgate`.
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
}

fn parse_lang(s: &str) -> Result<Language, String> {
    s.parse()
}

fn parse_layer(s: &str) -> Result<LayerName, String> {
    let l: LayerName = s.parse()?;
    if LayerName::SECURITY_LAYERS.contains(&l) {
        Ok(l)
    } else {
        Err(format!(
            "`{s}` is not a layer that can be disabled (expected one of: policy, prescan, isolation, seccomp, network, secrets, monitor)"
        ))
    }
}

/// Whether stdin is a pipe, a socket or a non-empty file: data the caller may have meant as
/// the skill's input (a skill reads its input on stdin, `skillgate run` does not).
fn stdin_holds_data() -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata("/dev/stdin").is_ok_and(|m| {
        let kind = m.file_type();
        kind.is_fifo() || kind.is_socket() || (kind.is_file() && m.len() > 0)
    })
}

fn read_input(args: &RunArgs) -> Result<serde_json::Value, UsageError> {
    let (text, origin) = match (&args.input, &args.input_file) {
        (Some(s), _) => (s.clone().into_bytes(), "--input".to_string()),
        (None, Some(p)) if p.as_os_str() == "-" => {
            let mut buf = Vec::new();
            std::io::Read::read_to_end(
                &mut std::io::Read::take(std::io::stdin(), MAX_INPUT_BYTES + 1),
                &mut buf,
            )
            .map_err(|e| format!("cannot read input from stdin: {e}"))?;
            (buf, "stdin".to_string())
        }
        (None, Some(p)) => {
            let len = std::fs::metadata(p)
                .map_err(|e| format!("cannot read input file {}: {e}", p.display()))?
                .len();
            if len > MAX_INPUT_BYTES {
                return Err(UsageError(format!(
                    "input file {} is {len} bytes, over the {MAX_INPUT_BYTES} byte limit",
                    p.display()
                )));
            }
            let b = std::fs::read(p)
                .map_err(|e| format!("cannot read input file {}: {e}", p.display()))?;
            (b, p.display().to_string())
        }
        (None, None) => {
            if stdin_holds_data() {
                eprintln!(
                    "note: stdin is not read: the input is `{{}}` (pass `--input-file -` to take the input from stdin)"
                );
            }
            return Ok(serde_json::json!({}));
        }
    };
    if text.len() as u64 > MAX_INPUT_BYTES {
        return Err(UsageError(format!(
            "input from {origin} is over the {MAX_INPUT_BYTES} byte limit"
        )));
    }
    serde_json::from_slice(&text)
        .map_err(|e| UsageError(format!("input from {origin} is not valid JSON: {e}")))
}

fn load_skill(args: &RunArgs) -> Result<Skill, UsageError> {
    if let Some(dir) = &args.skill_dir {
        return Ok(skill_dir::load(dir)?);
    }
    let (Some(path), Some(lang)) = (&args.code, args.lang) else {
        return Err(UsageError(
            "give a SKILL_DIR, or --code FILE with --lang".into(),
        ));
    };
    let len = std::fs::metadata(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .len();
    if len > skill_dir::MAX_CODE_BYTES {
        return Err(UsageError(format!(
            "{} is {len} bytes, over the {} byte limit",
            path.display(),
            skill_dir::MAX_CODE_BYTES
        )));
    }
    let code = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "script".into());
    let entry = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "main".into());
    Ok(Skill::builder(name, lang, code).entry(entry).build())
}

/// A skill folder with a `SKILL.md` that does not load (frontmatter, entry or schema) is a
/// bad skill definition: an `error` report naming the problem, exit 1. Anything else (no
/// such folder, no `SKILL.md`, an unreadable `--code` file) stays a usage error.
fn invalid_skill(args: &RunArgs, e: UsageError) -> Result<ExitCode, UsageError> {
    match &args.skill_dir {
        Some(dir) if dir.join("SKILL.md").is_file() => {
            let finding = skillgate::Finding::new(
                LayerName::Input,
                "skill.invalid",
                skillgate::Severity::High,
                format!("the skill folder cannot be used: {}", e.0),
            );
            let outcome = skillgate::ExecOutcome::rejected(skillgate::Status::Error, vec![finding]);
            render::print_report(&Report::new(&outcome, Duration::ZERO), args.format);
            Ok(ExitCode::from(1))
        }
        Some(dir) if !dir.is_dir() => Err(UsageError(format!(
            "no skill folder at {} (it does not exist or is not a directory)",
            dir.display()
        ))),
        _ => Err(e),
    }
}

pub(crate) fn run(args: RunArgs) -> Result<ExitCode, UsageError> {
    let process = Instant::now();
    let mut config = Config::load_or_default(args.config.as_deref())?;
    args.policy_files.apply(&mut config.policy);
    if let Some(dir) = &args.state_dir {
        config.monitor.state_dir = Some(dir.clone());
    }
    // The skill folder (its input schema is checked against the JSON Schema meta-schema)
    // and the input load on a thread of their own while the pipeline is built.
    let (skill, input, engine) = std::thread::scope(|scope| {
        let read = skillgate::background::Pending::start(scope, "skill-load", || {
            (load_skill(&args), read_input(&args))
        });
        let engine = skillgate::Engine::new(config, &args.disable);
        let (skill, input) = match read.wait() {
            Ok(read) => read,
            Err(e) => (Err(UsageError(e.clone())), Err(UsageError(e))),
        };
        (skill, input, engine)
    });
    tracing::debug!(target: "skillgate::timing", since_start = ?process.elapsed(), "pipeline built, skill loaded");
    let skill = match skill {
        Ok(skill) => skill,
        Err(e) => return invalid_skill(&args, e),
    };
    let input = input?;
    let engine = engine?;
    for notice in engine.notices() {
        anstream::eprintln!("warning: {notice}");
    }
    let tenant = engine
        .tenant_of(&args.agent, args.tenant.as_deref())
        .map_err(|e| UsageError(format!("{e} (--tenant)")))?;
    // --timeout and --memory are requests, clamped by the isolation layer like a skill's.
    let req = engine.request(
        Caller::new(&args.agent, tenant),
        skill,
        input,
        skillgate::LimitOverrides {
            wall_timeout: args.timeout,
            memory_bytes: args.memory,
            ..Default::default()
        },
    );

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let started = Instant::now();
    let outcome = rt
        .block_on(cancel_on_signal(engine.run(req)))?
        .map_err(|e| UsageError(format!("execution failed: {e}")))?;
    let report = Report::new(&outcome, started.elapsed());
    render::print_report(&report, args.format);
    tracing::debug!(target: "skillgate::timing", run = ?started.elapsed(), since_start = ?process.elapsed(), "report printed");
    // The process ends here, and what the run changed is already kept (the run's intent
    // record synced, its execution record written, the store's transaction committed;
    // none of it waits for this process): freeing the
    // pipeline (rule packs, policies, the store's connection) and the runtime's threads
    // would only delay the exit.
    std::mem::forget(engine);
    std::mem::forget(rt);
    Ok(if report.status.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Runs `run` to its end; SIGTERM or SIGINT meanwhile cancels the sandbox runs of this
/// process, which end at once as `error` with a `sandbox.cancelled` finding, so the run is
/// still reported and audited. A second signal gives up waiting (an executor other than
/// the native sandbox is not cancelled, and ends at its own wall clock).
async fn cancel_on_signal<F: std::future::Future>(run: F) -> Result<F::Output, UsageError> {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        return Ok(run.await);
    };
    tokio::pin!(run);
    tokio::select! {
        out = &mut run => return Ok(out),
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    skillgate_sandbox::cancel_runs();
    let again =
        || UsageError("stopped by a second signal while the run was being cancelled".into());
    tokio::select! {
        out = &mut run => Ok(out),
        _ = term.recv() => Err(again()),
        _ = int.recv() => Err(again()),
    }
}
