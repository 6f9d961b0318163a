//! `skillgate serve`: the pipeline as an HTTP service.
use crate::UsageError;
use clap::Args;
use skillgate_server::{Listen, ServerState, Settings};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// The config file (skillgate.toml); reloaded on SIGHUP.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// The state directory (the monitor's state, the keys and the skill registry).
    #[arg(long, value_name = "DIR")]
    state_dir: Option<PathBuf>,
    /// Where to listen: IP:PORT (port 0: any free port) or unix:PATH.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    listen: Listen,
    /// How long the runs in flight get to finish after SIGTERM or SIGINT before they are
    /// cancelled, e.g. `30s`.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = skillgate::units::parse_duration)]
    drain: std::time::Duration,
    /// Requests each API key may make a minute (bursts of as many); over it, 429.
    #[arg(long, value_name = "N", default_value_t = skillgate_server::ratelimit::DEFAULT_PER_MINUTE)]
    rate_limit: u32,
    /// Runs served at once; default: one per CPU (right for the embedded sandbox, whose
    /// runs are CPU-bound; raise it for an executor that runs elsewhere).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_runs: Option<u32>,
    /// Runs that may wait for a slot; beyond them, 429 with `Retry-After`.
    #[arg(long, value_name = "N", default_value_t = skillgate_server::admission::DEFAULT_QUEUE as u32)]
    max_queued: u32,
    /// The longest a run waits for a slot before it is shed with 429, e.g. `50ms`: bounds
    /// an admitted request's wait, and parks a request to be shed (a client that retries
    /// at once comes back once per wait).
    #[arg(long, value_name = "DURATION", default_value = "50ms", value_parser = skillgate::units::parse_duration)]
    max_queue_wait: std::time::Duration,
    /// Which waiting run a freed slot goes to: `newest-first` (under overload, the runs
    /// admitted are the ones that waited least; those that waited longest are shed) or
    /// `oldest-first` (first come, first served).
    #[arg(long, value_name = "ORDER", default_value = "newest-first", value_parser = clap::builder::ValueParser::new(|s: &str| s.parse::<skillgate_server::admission::QueueOrder>()))]
    queue_order: skillgate_server::admission::QueueOrder,
    /// 429 answers a second sent as soon as they are decided; beyond that rate each is
    /// held for --shed-hold first (a client that ignores `Retry-After` and retries at once
    /// is slowed down instead of taking the CPU the runs need). 0 holds none.
    #[arg(long, value_name = "N", default_value_t = skillgate_server::admission::DEFAULT_SHED_RATE)]
    shed_rate: u32,
    /// How long a 429 beyond --shed-rate is held before it is sent, e.g. `250ms`.
    #[arg(long, value_name = "DURATION", default_value = "250ms", value_parser = skillgate::units::parse_duration)]
    shed_hold: std::time::Duration,
    /// How long a session operation waits for the session's lock (another step of it
    /// running) before it is answered 409 busy, e.g. `5s`.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = skillgate::units::parse_duration)]
    session_lock_wait: std::time::Duration,
    /// The largest upload into a session's workspace, e.g. `64MiB`; over it, 413.
    #[arg(long, value_name = "SIZE", default_value = "64MiB", value_parser = skillgate::units::parse_size)]
    session_upload_limit: u64,
    /// Serve HTTPS with this certificate chain (PEM, the server's own first). Needs
    /// --tls-key; TCP addresses only.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Mutual TLS: refuse, during the handshake, every client without a certificate these
    /// CA certificates (PEM) issued. The request's key or JWT still decides the caller.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_client_ca: Option<PathBuf>,
    /// Also accept JSON Web Tokens as credentials (`Authorization: Bearer JWT`), verified
    /// with this key: the HMAC secret for HS algorithms (at least 32 bytes), else the
    /// issuer's public key in PEM; or the issuer's JWK set (`{"keys": [...]}`, chosen by the
    /// token's `kid`; read again on SIGHUP). The token's `sub`, `tenant`, `role` and
    /// `groups` claims decide the caller; `exp` is required. Needs --jwt-alg, --jwt-issuer,
    /// --jwt-audience.
    #[arg(long, value_name = "FILE", requires_all = ["jwt_alg", "jwt_issuer", "jwt_audience"])]
    jwt_key: Option<PathBuf>,
    /// The one algorithm tokens are signed with: HS256, RS256, PS256, ES256, EdDSA, ...
    #[arg(long, value_name = "ALG", requires = "jwt_key", value_parser = clap::builder::ValueParser::new(skillgate_server::jwt::parse_algorithm))]
    jwt_alg: Option<skillgate_server::jwt::Algorithm>,
    /// The `iss` a token must carry.
    #[arg(long, value_name = "ISS", requires = "jwt_key")]
    jwt_issuer: Option<String>,
    /// The `aud` a token must carry.
    #[arg(long, value_name = "AUD", requires = "jwt_key")]
    jwt_audience: Option<String>,
}

pub(crate) fn run(args: ServeArgs) -> Result<ExitCode, UsageError> {
    tracing_subscriber::fmt()
        .json()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let state = ServerState::open(Settings {
        config: args.config,
        state_dir: args.state_dir,
    })?
    .with_rate_limit(args.rate_limit);
    // The flags over what the configuration's `[sessions]` gave.
    let configured = state.sessions().settings().clone();
    let state = state.with_session_settings(skillgate_session::Settings {
        lock_wait: args.session_lock_wait,
        max_upload_bytes: args.session_upload_limit,
        ..configured
    });
    let max_runs = args
        .max_runs
        .map_or_else(skillgate_server::admission::default_concurrent, |n| {
            n as usize
        });
    let state = state
        .with_admission(
            max_runs,
            args.max_queued as usize,
            args.max_queue_wait,
            args.queue_order,
        )
        .with_shed_pace(skillgate_server::admission::ShedPace {
            per_second: args.shed_rate,
            hold: args.shed_hold,
            max_held: args.max_queued as usize,
        });
    let state = match (
        &args.jwt_key,
        args.jwt_alg,
        &args.jwt_issuer,
        &args.jwt_audience,
    ) {
        (Some(key), Some(alg), Some(iss), Some(aud)) => state.with_jwt(
            skillgate_server::jwt::JwtVerifier::from_file(alg, key, iss, aud)?,
        ),
        _ => state,
    };
    let state = match (args.tls_cert, args.tls_key) {
        (Some(cert), Some(key)) => state.with_tls(skillgate_server::tls::TlsFiles {
            cert,
            key,
            client_ca: args.tls_client_ca,
        })?,
        _ => state,
    };
    for notice in state.engine().notices() {
        tracing::warn!(notice = %notice, "engine");
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    rt.block_on(skillgate_server::serve(
        Arc::new(state),
        args.listen,
        args.drain,
        |addr| {
            // The first line of stdout: scripts and tests read the bound address here.
            println!("listening on {addr}");
            tracing::info!(addr, "listening");
        },
    ))?;
    Ok(ExitCode::SUCCESS)
}
