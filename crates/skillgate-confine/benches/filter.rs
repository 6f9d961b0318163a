//! What the seccomp filter costs.
//!
//! - `compile/PRESET`: compiling a preset to BPF (done once per run by the sandbox).
//! - `getppid/unfiltered` vs `getppid/PRESET`: the time of one cheap system call in a
//!   child process without and with the preset's filters installed (the static probe's
//!   `loop` mode makes N raw `getppid` calls and reports their total time; the filter
//!   is installed by the `confine-exec` helper, exactly as in the native tests).
//!
//! Before the timings it prints each preset's BPF size: the number of filters and
//! instructions per architecture.
use criterion::{Criterion, criterion_group, criterion_main};
use skillgate_confine::{Arch, bpf, preset, preset_names};
#[path = "../tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// Runs `n` getppid calls in a child (under `preset`, if any) and returns their time.
fn child_loop(probe: &Path, preset: Option<&str>, n: u64) -> Duration {
    let out = match preset {
        Some(p) => Command::new(env!("CARGO_BIN_EXE_confine-exec"))
            .args(["--preset", p, "--"])
            .arg(probe)
            .args(["loop", &n.to_string()])
            .output(),
        None => Command::new(probe).args(["loop", &n.to_string()]).output(),
    }
    .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let ns: u64 = text
        .trim()
        .strip_prefix("loop ns=")
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("unexpected probe output {text:?} {out:?}"));
    Duration::from_nanos(ns)
}

fn print_sizes() {
    for name in preset_names() {
        let profile = preset(name).unwrap();
        for arch in Arch::ALL {
            let filters = bpf::compile(&profile, arch).unwrap();
            let counts = bpf::instruction_counts(&filters);
            println!(
                "bpf size {name}/{arch}: {} filters, {} instructions ({counts:?})",
                counts.len(),
                counts.iter().sum::<usize>()
            );
        }
    }
}

fn benches(c: &mut Criterion) {
    print_sizes();
    let mut group = c.benchmark_group("compile");
    for name in preset_names() {
        let profile = preset(name).unwrap();
        let arch = Arch::native().unwrap();
        group.bench_function(name, |b| b.iter(|| bpf::compile(&profile, arch).unwrap()));
    }
    group.finish();

    let probe = common::probe();
    let mut group = c.benchmark_group("getppid");
    group.sample_size(20);
    group.bench_function("unfiltered", |b| {
        b.iter_custom(|iters| child_loop(probe, None, iters))
    });
    for name in preset_names() {
        group.bench_function(name, |b| {
            b.iter_custom(|iters| child_loop(probe, Some(name), iters))
        });
    }
    group.finish();
}

criterion_group!(filter, benches);
criterion_main!(filter);
