//! The conformance kit against the OCI-runtime executor, under runc and under gVisor's
//! runsc. A missing runtime binary fails its test with the reason (CI installs both with
//! `scripts/install-test-deps`); it is never skipped.
#![cfg(all(feature = "oci", feature = "conformance"))]
use skillgate_executors::conformance::{Kit, Report, Verdict};
use skillgate_executors::oci::{OciExecutor, OciSettings, RuntimeKind};
use skillgate_runtime::{Catalog, InstallOptions, Installed, Store};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// The `python` runtime, installed once into a scratch store.
fn python_runtime() -> &'static Installed {
    static RT: OnceLock<Installed> = OnceLock::new();
    static LOCK: Mutex<()> = Mutex::new(());
    let _g = LOCK.lock().unwrap();
    RT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        let catalog = Catalog::builtin().unwrap();
        Store::new(dir.join("store"))
            .install(
                catalog.get("python").unwrap(),
                &InstallOptions {
                    offline: true,
                    ..InstallOptions::default()
                },
                &mut |_| {},
            )
            .expect("installing the python runtime")
    })
}

/// A scratch state root per test (the runtimes' state, the shared root).
fn settings(runtime: &str) -> (OciSettings, tempfile::TempDir) {
    let state = tempfile::tempdir().unwrap();
    let mut s = OciSettings::new(runtime);
    s.state_root = state.path().to_path_buf();
    (s, state)
}

fn executor(runtime: &str) -> (OciExecutor, tempfile::TempDir) {
    let (s, state) = settings(runtime);
    let exec = OciExecutor::new(s).unwrap_or_else(|e| {
        panic!("the OCI executor with {runtime} cannot start (apt-get install runc runsc): {e}")
    });
    (exec, state)
}

/// The kit against the executor, with the python runtime (its tree bound at /runtime)
/// and with the host's interpreter (no runtime named).
async fn kit(exec: &OciExecutor, with_runtime: bool) -> Report {
    let mut kit = Kit::new(exec.capabilities());
    if with_runtime {
        kit.spec.interpreter = Some(python_runtime().interpreter.clone());
        kit.runtime = Some("python".into());
    }
    let probe = exec.clone();
    kit.leftovers = Some(Box::new(move |ids| {
        let probe = probe.clone();
        Box::pin(async move { probe.leftovers(&ids).await.map_err(|e| e.to_string()) })
    }));
    let report = kit.run(exec.clone()).await;
    println!(
        "oci {:?} (runtime tree: {with_runtime}):\n{report}",
        exec.runtime()
    );
    report
}

fn all_pass(report: &Report) {
    assert!(
        report.0.iter().all(|c| c.verdict == Verdict::Pass),
        "{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runc_passes_the_kit() {
    let (exec, _state) = executor("runc");
    assert_eq!(exec.runtime(), RuntimeKind::Runc);
    all_pass(&kit(&exec, true).await);
    all_pass(&kit(&exec, false).await);
}

/// gVisor holds every claim; it claims neither a seccomp kill rule, which its runsc cannot
/// load (the isolation layer refuses such a profile; the executor itself refuses it too,
/// never running without the rule), nor the report of refused forks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runsc_passes_the_kit() {
    let (exec, _state) = executor("runsc");
    assert_eq!(exec.runtime(), RuntimeKind::Runsc);
    let report = kit(&exec, true).await;
    // Not claimed under runsc: a seccomp kill action (runsc cannot load one) and the report
    // of refused forks (gVisor's kernel refuses them); every claim holds.
    for check in &report.0 {
        match check.name {
            "seccomp_kill" | "pids_reported" => {
                assert_eq!(check.verdict, Verdict::NotClaimed, "{report}")
            }
            _ => assert_eq!(check.verdict, Verdict::Pass, "{report}"),
        }
    }
}

/// crun cannot run on a host with hybrid cgroups (this one has them): the executor
/// refuses it up front, saying why, rather than failing every run; elsewhere it takes it.
#[test]
fn crun_is_refused_where_the_cgroups_are_hybrid() {
    let refusal = skillgate_executors::oci::crun_refusal(std::path::Path::new("/sys/fs/cgroup"));
    let dir = tempfile::tempdir().unwrap();
    let crun: PathBuf = dir.path().join("crun");
    std::fs::write(&crun, "#!/bin/sh\nexit 1\n").unwrap();
    let (mut s, _state) = settings("runc");
    s.runtime = crun;
    match (OciExecutor::new(s), refusal) {
        (Err(e), Some(_)) => assert!(e.to_string().contains("hybrid"), "{e}"),
        (Ok(_), None) => {}
        (got, refusal) => panic!("crun refusal {refusal:?}, executor {:?}", got.err()),
    }
}
