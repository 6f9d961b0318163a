//! The conformance kit against the native sandbox, Docker Engine and Podman.
//!
//! The engines are started with `scripts/services up NAME` and stopped at the end; when
//! one cannot start, its test fails with the reason (CI installs them), it is never
//! skipped.
#![cfg(all(feature = "docker", feature = "conformance"))]
use skillgate_executors::conformance::{Kit, Report, Verdict};
use skillgate_executors::docker::{DockerExecutor, DockerSettings, image};
mod common;
use common::{Service, python_runtime, value_of};
use std::sync::Arc;

fn services(cmd: &str, name: &str) -> String {
    common::services(&[cmd, name])
}

/// One test at a time per service (each stops it when done).
async fn lock(name: &str) -> tokio::sync::MutexGuard<'static, ()> {
    static DOCKER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    static PODMAN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    match name {
        "docker" => DOCKER.lock().await,
        _ => PODMAN.lock().await,
    }
}

fn socket_of(config: &str) -> String {
    value_of(config, "socket")
}

/// The kit against the engine `name`, with each OCI runtime of `runtimes` (`None`: the
/// engine's default), one after another on one start of the service.
async fn engine_kit(name: &'static str, runtimes: &[Option<&str>]) -> Vec<Report> {
    let _exclusive = lock(name).await;
    let config = services("up", name);
    let _service = Service(name);
    let mut reports = Vec::new();
    for runtime in runtimes {
        reports.push(runtime_kit(name, &config, *runtime).await);
    }
    reports
}

async fn runtime_kit(name: &str, config: &str, runtime: Option<&str>) -> Report {
    let socket = socket_of(config);
    let (installed, archive) = python_runtime();
    let mut settings = DockerSettings::new(&socket);
    settings.runtime = runtime.map(str::to_owned);
    let exec = DockerExecutor::connect(settings)
        .await
        .expect("connecting to the engine");
    image::load_oci_archive(exec.client(), archive, &image::runtime_image("python"))
        .await
        .expect("loading the runtime image");
    // Loading the same archive again keeps the image (no pile of re-imports).
    let id = |docker: &bollard::Docker| {
        let docker = docker.clone();
        async move {
            docker
                .inspect_image(&image::runtime_image("python"))
                .await
                .unwrap()
                .id
        }
    };
    let first = id(exec.client()).await;
    image::load_oci_archive(exec.client(), archive, &image::runtime_image("python"))
        .await
        .expect("loading the runtime image again");
    assert_eq!(
        id(exec.client()).await,
        first,
        "the same layer was imported twice"
    );
    let mut kit = Kit::new(exec.capabilities());
    kit.spec.interpreter = Some(installed.interpreter.clone());
    kit.runtime = Some("python".into());
    let probe = exec.clone();
    kit.leftovers = Some(Box::new(move |ids| {
        let probe = probe.clone();
        Box::pin(async move { probe.leftovers(&ids).await.map_err(|e| e.to_string()) })
    }));
    let report = kit.run(exec).await;
    println!("{name} (runtime {runtime:?}):\n{report}");
    report
}

/// Every check passes, `pids_reported` included: the engines refuse the forks without
/// saying so, and the executor reads the container's pids cgroup while it runs.
fn all_pass(reports: &[Report]) {
    for report in reports {
        for check in &report.0 {
            assert_eq!(check.verdict, Verdict::Pass, "{report}");
        }
    }
}

/// Docker Engine with runc, then with gVisor (`runsc`, registered by scripts/services).
/// gVisor claims neither a seccomp kill action (its runsc cannot load one: such a profile
/// is refused) nor the report of refused forks (its kernel refuses them, out of the host's
/// sight); everything it claims holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docker_engine_passes_the_kit_with_runc_and_gvisor() {
    let reports = engine_kit("docker", &[None, Some("runsc")]).await;
    all_pass(&reports[..1]);
    let gvisor = &reports[1];
    for check in &gvisor.0 {
        match check.name {
            "seccomp_kill" | "pids_reported" => {
                assert_eq!(check.verdict, Verdict::NotClaimed, "{gvisor}")
            }
            _ => assert_eq!(check.verdict, Verdict::Pass, "{gvisor}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn podman_passes_the_kit() {
    all_pass(&engine_kit("podman", &[None]).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_native_sandbox_passes_the_kit() {
    // With the seccomp compiler `skillgate run` gives it.
    let native = skillgate_sandbox::NativeSandbox::new().with_seccomp_compiler(Arc::new(|p| {
        let arch = skillgate_confine::Arch::native().ok_or("no seccomp for this arch")?;
        skillgate_confine::bpf::compile(p, arch).map_err(|e| e.to_string())
    }));
    let kit = Kit::new(native.capabilities());
    let report = kit.run(native).await;
    println!("native:\n{report}");
    assert!(report.passed(), "{report}");
}

/// The kit catches an executor claiming what it does not enforce: the process executor
/// (no isolation) claiming the native sandbox's capabilities fails the containment
/// checks, and passes the ones it does keep.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_executor_claiming_too_much_fails_the_kit() {
    let claims = skillgate_sandbox::NativeSandbox::new().capabilities();
    let report = Kit::new(claims)
        .run(skillgate_sandbox::ProcessExecutor::new())
        .await;
    println!("process claiming native:\n{report}");
    assert!(!report.passed());
    for check in ["network_none", "read_only_root", "uid", "memory", "pids"] {
        assert!(
            matches!(report.verdict(check), Some(Verdict::Fail(_))),
            "{check} should fail: {report}"
        );
    }
    for check in ["json", "exit_code", "streams", "timeout"] {
        assert_eq!(report.verdict(check), Some(&Verdict::Pass), "{report}");
    }
}

/// The engine stops in the middle of a run: the run ends with an error naming the
/// engine's socket, and once the engine is back the executor's next run removes the
/// container the first one could not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_the_stopped_engine_kept_is_removed_when_it_is_back() {
    use skillgate_core::{Caller, ExecRequest, Language, Skill, Status};
    use tower::ServiceExt;
    let _exclusive = lock("docker").await;
    let socket = socket_of(&services("up", "docker"));
    let _service = Service("docker");
    let (installed, archive) = python_runtime();
    let exec = DockerExecutor::connect(DockerSettings::new(&socket))
        .await
        .unwrap();
    image::load_oci_archive(exec.client(), archive, &image::runtime_image("python"))
        .await
        .unwrap();
    let request = |code: &str| {
        let skill = Skill::builder("s", Language::Python, code.as_bytes().to_vec())
            .runtime("python")
            .build();
        let mut req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
        req.spec.interpreter = Some(installed.interpreter.clone());
        req.spec.limits.wall_timeout = std::time::Duration::from_secs(120);
        req.spec.limits.cpu_time = None;
        req
    };
    let long = request("import time\nwhile True: time.sleep(1)\n");
    let id = long.id.to_string();
    let run = tokio::spawn(exec.clone().oneshot(long));
    // Running: its container exists.
    let mut seen = false;
    for _ in 0..120 {
        if !exec
            .leftovers(std::slice::from_ref(&id))
            .await
            .unwrap()
            .is_empty()
        {
            seen = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert!(seen, "the run's container never appeared");
    services("down", "docker");
    let err = run
        .await
        .unwrap()
        .expect_err("a run whose engine stopped is an error");
    assert!(err.to_string().contains(&socket), "{err}");

    services("up", "docker");
    assert!(
        !exec
            .leftovers(std::slice::from_ref(&id))
            .await
            .unwrap()
            .is_empty(),
        "the stopped engine kept the container (else this test shows nothing)"
    );
    let next = exec.clone().oneshot(request("print(1)\n")).await.unwrap();
    assert_eq!(next.status, Status::Ok, "{next:?}");
    assert_eq!(exec.leftovers(&[id]).await.unwrap(), Vec::<String>::new());
}

/// Under gVisor the host's memory cgroup kills the sandbox at the limit, and Docker
/// Engine misses that event now and then (137 with `OOMKilled` false: the kit's `memory`
/// check once ended `ok` with signal 9 in CI). The executor reads the kernel's `oom_kill`
/// counter of the container's cgroup too: every run past the limit is
/// `resource_exhausted`, and a skill that SIGKILLs itself is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gvisor_out_of_memory_is_resource_exhausted_every_time() {
    use skillgate_core::{Caller, ExecRequest, Language, Skill, Status};
    use tower::ServiceExt;
    let _exclusive = lock("docker").await;
    let config = services("up", "docker");
    let _service = Service("docker");
    let (installed, archive) = python_runtime();
    let mut settings = DockerSettings::new(socket_of(&config));
    settings.runtime = Some("runsc".into());
    let exec = DockerExecutor::connect(settings)
        .await
        .expect("connecting to the engine");
    image::load_oci_archive(exec.client(), archive, &image::runtime_image("python"))
        .await
        .expect("loading the runtime image");
    let request = |code: &str| {
        let skill = Skill::builder("oom", Language::Python, code.as_bytes().to_vec())
            .runtime("python".to_string())
            .build();
        let mut req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
        req.spec.interpreter = Some(installed.interpreter.clone());
        req.spec.limits.memory_bytes = 64 << 20;
        req
    };
    let hog = "chunks = []\nfor _ in range(64):\n    chunks.append(bytearray(8 << 20))\n";
    for run in 0..10 {
        let out = exec.clone().oneshot(request(hog)).await.unwrap();
        assert_eq!(
            out.status,
            Status::ResourceExhausted,
            "run {run}: {:?} signal {:?} {:?}",
            out.status,
            out.signal,
            out.findings
        );
        assert!(out.findings.iter().any(|f| f.rule_id == "limit.memory"));
    }
    let suicide = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n";
    let out = exec.clone().oneshot(request(suicide)).await.unwrap();
    assert_ne!(out.status, Status::ResourceExhausted, "{out:?}");
    assert_eq!(out.signal, Some(9), "{out:?}");
}
