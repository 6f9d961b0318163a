//! The supervisor's start cost against the bare interpreter: `python3 -c pass` and
//! `node -e 0` spawned directly by `std::process::Command`, and the same script run by
//! the [`ProcessExecutor`] (work directory, pipes, caps, rlimits, reaping, artifacts).
use criterion::{Criterion, criterion_group, criterion_main};
use skillgate_core::{Caller, ExecRequest, Language, Skill};
use skillgate_sandbox::{Interpreter, ProcessExecutor};
use std::process::{Command, Stdio};
use tower::ServiceExt;

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("start");
    group.sample_size(20);
    for (lang, args, code) in [
        (Language::Python, ["-c", "pass"], "pass\n"),
        (Language::JavaScript, ["-e", "0"], "0\n"),
    ] {
        let interp = Interpreter::resolve(lang, None).expect("interpreter on PATH");
        group.bench_function(format!("{lang}/bare"), |b| {
            b.iter(|| {
                let st = Command::new(&interp.program)
                    .args(args)
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .status()
                    .unwrap();
                assert!(st.success());
            })
        });
        let exec = ProcessExecutor::new();
        let skill =
            std::sync::Arc::new(Skill::builder("b", lang, code.as_bytes().to_vec()).build());
        group.bench_function(format!("{lang}/supervisor"), |b| {
            b.iter(|| {
                let req =
                    ExecRequest::new(Caller::new("a", "t"), skill.clone(), serde_json::json!({}));
                let out = rt.block_on(exec.clone().oneshot(req)).unwrap();
                assert_eq!(out.exit_code, Some(0));
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
