//! Runs one snippet in the native sandbox and prints the outcome; used by
//! `benches/sandbox_start.sh` to time sandboxed interpreter starts.
//!
//! ```sh
//! cargo run --release -p skillgate-sandbox --example sandbox_run -- python 'print(1)' [N]
//! ```
//! With `N`, runs the snippet N times and prints each run's wall time in milliseconds.
//! With `serve` instead of `N`, answers each line read on stdin with milliseconds: `go`
//! runs the snippet once in the sandbox; a JSON array of strings runs that command outside
//! it (stdio to /dev/null, the same small environment, cwd `/tmp`). One process times
//! every contender the same way, so a harness can interleave them fairly.
//!
//! `SKILLGATE_LOG=skillgate_sandbox::timing=debug` prints each sandboxed run's phases on
//! stderr: `prepare_us` (checks, pipes, cgroup, plan), `start_us` (clone; the init builds
//! the root and enters its user namespace), `release_us` (cgroup check, id maps),
//! `skill_us` (the init's remaining namespaces, the interpreter's whole run, reaping) and
//! `collect_us` (artifacts, limit events, output).
use skillgate_core::{Caller, ExecRequest, Language, Skill};
use skillgate_sandbox::NativeSandbox;
use std::time::Instant;
use tower::ServiceExt;

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut args = std::env::args().skip(1);
    let (Some(lang), Some(code)) = (args.next(), args.next()) else {
        return Err("usage: sandbox_run python|javascript CODE [RUNS | serve]".into());
    };
    let lang: Language = lang.parse()?;
    let mode = args.next();
    let serve = mode.as_deref() == Some("serve");
    let runs: Option<usize> = if serve {
        None
    } else {
        mode.map(|n| n.parse()).transpose()?
    };
    if let Ok(filter) = std::env::var("SKILLGATE_LOG") {
        tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .init();
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let sandbox = NativeSandbox::new();
    eprintln!("{}", sandbox.host().describe());
    let skill = std::sync::Arc::new(Skill::builder("snippet", lang, code.into_bytes()).build());
    let run_once = || {
        let req = ExecRequest::new(
            Caller::new("bench", "bench"),
            skill.clone(),
            serde_json::json!({}),
        );
        let t = Instant::now();
        rt.block_on(sandbox.clone().oneshot(req))
            .map(|o| (o, t.elapsed().as_secs_f64() * 1000.0))
    };
    if serve {
        use std::io::{BufRead, Write};
        let mut out = std::io::stdout().lock();
        for line in std::io::stdin().lock().lines() {
            let line = line?;
            let ms = if line.trim() == "go" {
                let (o, ms) = run_once()?;
                if o.exit_code != Some(0) {
                    return Err(format!("run failed: {}", o.status).into());
                }
                ms
            } else {
                let argv: Vec<String> = serde_json::from_str(&line)
                    .map_err(|e| format!("expected `go` or a JSON array of strings: {e}"))?;
                time_command(&argv)?
            };
            writeln!(out, "{ms:.3}")?;
            out.flush()?;
        }
        return Ok(());
    }
    for _ in 0..runs.unwrap_or(1) {
        let (out, ms) = run_once()?;
        if runs.is_some() {
            println!("{ms:.3}");
            if !out.status.is_ok() || out.exit_code != Some(0) {
                return Err(format!(
                    "run failed: {} {:?}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                )
                .into());
            }
        } else {
            println!(
                "status: {} exit: {:?} signal: {:?}",
                out.status, out.exit_code, out.signal
            );
            println!("stdout: {}", String::from_utf8_lossy(&out.stdout));
            println!("stderr: {}", String::from_utf8_lossy(&out.stderr));
            for f in &out.findings {
                println!("finding: {} {}", f.rule_id, f.message);
            }
        }
    }
    Ok(())
}

/// Runs `argv` outside the sandbox with the environment the sandbox gives a skill and
/// returns its wall time in milliseconds, from spawn to exit.
fn time_command(argv: &[String]) -> Result<f64, Box<dyn std::error::Error + Send + Sync>> {
    use std::process::{Command, Stdio};
    let (program, args) = argv.split_first().ok_or("an empty command")?;
    let t = Instant::now();
    let status = Command::new(program)
        .args(args)
        .env_clear()
        .envs([
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            ("HOME", "/tmp"),
            ("LANG", "C.UTF-8"),
        ])
        .current_dir("/tmp")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    if !status.success() {
        return Err(format!("{program} failed: {status}").into());
    }
    Ok(ms)
}
