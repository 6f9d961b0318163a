//! The `skillgate` command.
//!
//! Exit codes: 0 when the status is `ok` (or the check passed), 1 for any other status,
//! 2 for a usage, config or input error (a message on stderr, no report). A skill folder
//! whose SKILL.md, entry or schema does not load is an `error` report (exit 1).

mod cmd;
mod render;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Security pipeline for AI-agent skills.
#[derive(Debug, Parser)]
#[command(name = "skillgate", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run a skill (a folder, or a bare script) through the pipeline.
    Run(cmd::run::RunArgs),
    /// Write the seccomp profile or network policy for container platforms.
    Emit(cmd::emit::EmitArgs),
    /// Validate, check, test and list with the Cedar policy gate.
    Policy(cmd::policy::PolicyArgs),
    /// Inspect the behavioural monitor's state: status, release a quarantine, metrics.
    Monitor(cmd::monitor::MonitorArgs),
    /// Check the configured executor against the executor contract (the conformance kit).
    #[command(subcommand)]
    Executor(cmd::executor::ExecutorCommand),
    /// Install, list, verify and locate named runtimes (an interpreter with pinned packages).
    Runtime(cmd::runtime::RuntimeArgs),
    /// Scan code or output without running anything.
    #[command(subcommand)]
    Scan(ScanCommand),
    /// Test, list and explain the pre-scan rules.
    #[command(subcommand)]
    Rules(cmd::rules::RulesCommand),
    /// Create a skill folder, or check one without running it.
    #[command(subcommand)]
    Skill(cmd::skill::SkillCommand),
    /// Serve the pipeline over HTTP (API keys, a skill registry, runs).
    Serve(cmd::serve::ServeArgs),
    /// Create, list and revoke the API keys of `serve`.
    Keys(cmd::keys::KeysArgs),
    /// Serve the skills an agent may run as MCP tools over stdio; each call is a pipeline run.
    Mcp(cmd::mcp::McpArgs),
    /// Work in a session: a workspace kept as a log of steps and uploads, each step a
    /// pipeline run in a sandbox brought to the state the log describes.
    Session(cmd::session::SessionArgs),
}

/// `skillgate scan ...`.
#[derive(Debug, Subcommand)]
enum ScanCommand {
    /// Pre-scan Python or JavaScript code (files, directories, or `-` for stdin).
    Code(cmd::scan_code::ScanCodeArgs),
    /// Scan text (a skill's output, a log, a file) for leaked secrets.
    Output(cmd::scan_output::ScanOutputArgs),
}

/// An error that ends the command with exit code 2 and a message on stderr.
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

impl<E: std::fmt::Display> From<E> for UsageError {
    fn from(e: E) -> Self {
        UsageError(e.to_string())
    }
}

/// `RUST_LOG` set: the one-shot commands log to stderr as it says (for example
/// `RUST_LOG=skillgate_session::timing=debug,skillgate_sandbox::timing=debug` times a
/// session step's phases; `skillgate::timing=debug` a run's start-up). Unset, nothing is installed (a command's start stays lean).
/// `serve` and `mcp` install their own.
fn log_if_asked(command: &Command) {
    if matches!(command, Command::Serve(_) | Command::Mcp(_)) {
        return;
    }
    if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_default_env() {
        let _ = tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_env_filter(filter)
            .try_init();
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    log_if_asked(&cli.command);
    let result = match cli.command {
        Command::Run(args) => cmd::run::run(args),
        Command::Emit(args) => cmd::emit::run(args),
        Command::Policy(args) => cmd::policy::run(args),
        Command::Monitor(args) => cmd::monitor::run(args),
        Command::Runtime(args) => cmd::runtime::run(args),
        Command::Executor(c) => cmd::executor::run(c),
        Command::Scan(ScanCommand::Output(args)) => cmd::scan_output::run(args),
        Command::Scan(ScanCommand::Code(args)) => cmd::scan_code::run(args),
        Command::Rules(c) => cmd::rules::run(c),
        Command::Skill(c) => cmd::skill::run(c),
        Command::Serve(args) => cmd::serve::run(args),
        Command::Keys(args) => cmd::keys::run(args),
        Command::Mcp(args) => cmd::mcp::run(args),
        Command::Session(args) => cmd::session::run(args),
    };
    match result {
        Ok(code) => code,
        Err(UsageError(msg)) => {
            anstream::eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}
