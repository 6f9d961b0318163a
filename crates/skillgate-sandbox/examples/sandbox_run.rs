//! Runs one snippet in the native sandbox and prints the outcome; used by
//! `benches/sandbox_start.sh` to time sandboxed interpreter starts.
//!
//! ```sh
//! cargo run --release -p skillgate-sandbox --example sandbox_run -- python 'print(1)' [N]
//! ```
//! With `N`, runs the snippet N times and prints each run's wall time in milliseconds.
use skillgate_core::{Caller, ExecRequest, Language, Skill};
use skillgate_sandbox::NativeSandbox;
use std::time::Instant;
use tower::ServiceExt;

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut args = std::env::args().skip(1);
    let (Some(lang), Some(code)) = (args.next(), args.next()) else {
        return Err("usage: sandbox_run python|javascript CODE [RUNS]".into());
    };
    let lang: Language = lang.parse()?;
    let runs: Option<usize> = args.next().map(|n| n.parse()).transpose()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let sandbox = NativeSandbox::new();
    eprintln!("{}", sandbox.host().describe());
    let skill = std::sync::Arc::new(Skill::builder("snippet", lang, code.into_bytes()).build());
    for _ in 0..runs.unwrap_or(1) {
        let req = ExecRequest::new(
            Caller::new("bench", "bench"),
            skill.clone(),
            serde_json::json!({}),
        );
        let t = Instant::now();
        let out = rt.block_on(sandbox.clone().oneshot(req))?;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
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
