//! `[executor] kind = "docker"`: the config is checked, and the whole pipeline runs a
//! skill with a runtime in a container on the Docker Engine that `scripts/services up
//! docker` starts (a service that cannot start fails the test, with the reason).
use skillgate::{Caller, Engine, Language, LayerName, LimitOverrides, Skill, Status};
use skillgate_executors::docker::{DockerExecutor, DockerSettings, image};
use skillgate_runtime::InstallOptions;
use std::path::Path;
use std::process::Command;

fn config(text: &str, state: &Path) -> skillgate::Config {
    let mut c = skillgate::config::from_str(text, "test").unwrap();
    c.monitor.state_dir = Some(state.to_path_buf());
    c
}

fn engine_error(text: &str) -> String {
    let t = tempfile::tempdir().unwrap();
    match Engine::new(config(text, t.path()), &[]) {
        Ok(_) => panic!("assembled: {text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn docker_needs_a_socket_and_its_keys_belong_to_it_alone() {
    let err = engine_error("[executor]\nkind = \"docker\"\n");
    assert!(err.contains("needs `socket`"), "{err}");
    let err = engine_error("[executor]\nkind = \"native\"\nsocket = \"/x.sock\"\n");
    assert!(
        err.contains("`socket` applies to kind = \"docker\" only"),
        "{err}"
    );
    let err = engine_error("[executor]\nkind = \"process\"\nimage = \"x\"\n");
    assert!(err.contains("`image` applies"), "{err}");
}

#[tokio::test]
async fn a_missing_engine_is_an_error_naming_the_socket() {
    let t = tempfile::tempdir().unwrap();
    let socket = t.path().join("no-engine.sock");
    let text = format!(
        "[executor]\nkind = \"docker\"\nsocket = \"{}\"\n",
        socket.display()
    );
    // No socket at all: the pipeline is not built.
    let err = engine_error(&text);
    assert!(err.contains(&socket.display().to_string()), "{err}");
    // Something at the path that no engine answers on: the run fails, naming it.
    std::fs::write(&socket, b"").unwrap();
    let engine = Engine::new(config(&text, t.path()), &[LayerName::Policy]).unwrap();
    let skill = Skill::builder("s", Language::Python, b"print(1)".to_vec()).build();
    let req = engine.request(
        Caller::new("a", "t"),
        skill,
        serde_json::json!({}),
        LimitOverrides::default(),
    );
    let err = engine.run(req).await.unwrap_err().to_string();
    assert!(err.contains(&socket.display().to_string()), "{err}");
}

fn services(cmd: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/services");
    let out = Command::new(script).args([cmd, "docker"]).output().unwrap();
    assert!(
        out.status.success(),
        "scripts/services {cmd} docker failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

struct Stop;
impl Drop for Stop {
    fn drop(&mut self) {
        services("down");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skillgate_runs_a_runtime_skill_in_a_docker_container() {
    let section = services("up");
    let _stop = Stop;
    let state = tempfile::tempdir().unwrap();
    let cfg = config(&section, state.path());
    // The runtime, installed where the isolation layer finds it, exported and loaded.
    let runtimes = skillgate::runtimes::Runtimes::from_config(&cfg).unwrap();
    let installed = runtimes
        .store()
        .unwrap()
        .install(
            runtimes.catalog().get("python").unwrap(),
            &InstallOptions {
                offline: true,
                ..InstallOptions::default()
            },
            &mut |_| {},
        )
        .unwrap();
    let archive = state.path().join("python.oci.tar");
    skillgate_runtime::export_oci_archive(&installed, &archive).unwrap();
    let socket = cfg.executor.socket.clone().unwrap();
    let client = DockerExecutor::connect(DockerSettings::new(socket))
        .await
        .unwrap();
    image::load_oci_archive(client.client(), &archive, &image::runtime_image("python"))
        .await
        .unwrap();

    let engine = Engine::new(cfg, &[LayerName::Policy]).unwrap();
    let code = b"import json,sys,os\nd=json.load(sys.stdin)\nprint(json.dumps({'sum': sum(d['n']), 'uid': os.getuid(), 'py': sys.executable}))\n";
    let skill = Skill::builder("sum", Language::Python, code.to_vec())
        .runtime("python")
        .build();
    let req = engine.request(
        Caller::new("a", "t"),
        skill,
        serde_json::json!({"n": [1, 2, 3]}),
        LimitOverrides::default(),
    );
    let out = engine.run(req).await.unwrap();
    assert_eq!(out.status, Status::Ok, "{out:?}");
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        got,
        serde_json::json!({"sum": 6, "uid": 1000, "py": "/runtime/bin/python3"})
    );
}
