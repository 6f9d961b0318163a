//! `[executor] kind = "jupyter"`: the config is checked, and the whole pipeline runs a
//! skill on the Jupyter Kernel Gateway that `scripts/services up jupyter` starts (a
//! service that cannot start fails the test, with the reason): refused by the isolation
//! layer, which a kernel cannot satisfy, and run once that layer is disabled.
use skillgate::{Caller, Engine, Language, LayerName, LimitOverrides, Skill, Status};
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
fn jupyter_needs_a_url_and_its_keys_belong_to_it_alone() {
    let err = engine_error("[executor]\nkind = \"jupyter\"\n");
    assert!(err.contains("needs `url`"), "{err}");
    let err = engine_error("[executor]\nkind = \"native\"\nurl = \"http://127.0.0.1:1\"\n");
    assert!(
        err.contains("`url` applies to kind = \"jupyter\" only"),
        "{err}"
    );
    let err = engine_error("[executor]\nkind = \"docker\"\nsocket = \"/x\"\ntoken = \"t\"\n");
    assert!(err.contains("`token` applies"), "{err}");
    let err = engine_error("[executor]\nkind = \"jupyter\"\nsocket = \"/x\"\nurl = \"http://h\"\n");
    assert!(err.contains("`socket` applies"), "{err}");
    let err = engine_error("[executor]\nkind = \"jupyter\"\nurl = \"https://gw:8888\"\n");
    assert!(err.contains("https is not supported"), "{err}");
}

fn services(cmd: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/services");
    let out = Command::new(script)
        .args([cmd, "jupyter"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "scripts/services {cmd} jupyter failed: {}",
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
async fn skillgate_runs_a_skill_on_a_kernel_gateway_only_without_the_isolation_layer() {
    let section = services("up");
    let _stop = Stop;
    let state = tempfile::tempdir().unwrap();
    let code = b"import json,sys\nd=json.load(sys.stdin)\nprint(json.dumps({'sum': sum(d['n'])}))\nsys.exit(2)\n";
    let skill = || Skill::builder("sum", Language::Python, code.to_vec()).build();
    let input = serde_json::json!({"n": [1, 2, 3]});

    // The isolation layer refuses it: a kernel enforces no limits and no network none.
    let engine = Engine::new(config(&section, state.path()), &[LayerName::Policy]).unwrap();
    let req = engine.request(
        Caller::new("a", "t"),
        skill(),
        input.clone(),
        LimitOverrides::default(),
    );
    let out = engine.run(req).await.unwrap();
    assert_eq!(out.status, Status::Error, "{out:?}");
    let refused: Vec<_> = out
        .findings
        .iter()
        .filter(|f| f.rule_id == "isolation.unenforceable")
        .map(|f| f.message.as_str())
        .collect();
    assert!(
        refused.iter().any(|m| m.contains("network none")),
        "{refused:?}"
    );
    assert!(
        refused.iter().any(|m| m.contains("memory limit")),
        "{refused:?}"
    );
    assert!(out.stdout.is_empty());

    // Without it, the skill runs on a kernel.
    let engine = Engine::new(
        config(&section, state.path()),
        &[LayerName::Policy, LayerName::Isolation],
    )
    .unwrap();
    let req = engine.request(
        Caller::new("a", "t"),
        skill(),
        input,
        LimitOverrides::default(),
    );
    let out = engine.run(req).await.unwrap();
    assert_eq!(
        (out.status, out.exit_code),
        (Status::Ok, Some(2)),
        "{out:?}"
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got, serde_json::json!({"sum": 6}));
}
