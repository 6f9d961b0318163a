//! Per-core throughput of the secret scan on the benign corpus, measured in CPU time of
//! this thread (`/proc/thread-self/schedstat`), so that other load on a shared machine
//! does not count against it (the criterion bench measures wall time).
//!
//! `cargo run --release -p skillgate-secrets --example scan_cpu [SECONDS]`
use skillgate_secrets::SecretScanner;
use std::hint::black_box;
use std::process::ExitCode;

#[path = "../benches/common/mod.rs"]
mod common;

/// Nanoseconds this thread has run on a CPU, if the kernel says.
fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

fn main() -> ExitCode {
    let seconds: f64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5.0);
    let scanner = match SecretScanner::default_pack() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("scan_cpu: the default pack does not load: {e}");
            return ExitCode::FAILURE;
        }
    };
    let text = common::benign(8 << 20);
    // Warm up: compile the regexes the corpus needs.
    black_box(scanner.scan(&text));
    let Some(start) = cpu_ns() else {
        eprintln!("scan_cpu: /proc/thread-self/schedstat is not readable");
        return ExitCode::FAILURE;
    };
    let (mut runs, mut used) = (0u64, 0u64);
    while (used as f64) < seconds * 1e9 {
        black_box(scanner.scan(black_box(&text)));
        runs += 1;
        used = cpu_ns().unwrap_or(u64::MAX) - start;
    }
    let mib = (runs * text.len() as u64) as f64 / (1 << 20) as f64;
    println!(
        "benign scan: {runs} runs of {} MiB in {:.2} s of CPU: {:.0} MiB/s per core",
        text.len() >> 20,
        used as f64 / 1e9,
        mib / (used as f64 / 1e9)
    );
    ExitCode::SUCCESS
}
