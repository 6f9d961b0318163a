//! `[executor] kind = "jupyter"`: the config is checked, and the whole pipeline runs a
//! skill on the Jupyter Kernel Gateway that `scripts/services up jupyter` starts (a
//! service that cannot start fails the test, with the reason): refused by the isolation
//! layer, which a kernel cannot satisfy, run once that layer is disabled, and run with
//! the layer on when the operator's `[executor.statement]` vouches for the remote side
//! (the report and the audit record name the statement).
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

const STATEMENT: &str = "[executor.statement]\nname = \"gw-in-vm\"\nenforces = [\"isolation\", \"seccomp\", \"network_none\"]\n";

#[test]
fn the_operator_statement_is_checked_and_belongs_to_jupyter_alone() {
    let jupyter = "[executor]\nkind = \"jupyter\"\nurl = \"http://127.0.0.1:1\"\n";
    let t = tempfile::tempdir().unwrap();
    let engine = Engine::new(config(&format!("{jupyter}{STATEMENT}"), t.path()), &[]).unwrap();
    assert!(
        engine.notices().iter().any(|n| n.contains("`gw-in-vm`")),
        "{:?}",
        engine.notices()
    );
    let bad = skillgate::config::from_str(
        &format!("{jupyter}[executor.statement]\nname = \"x\"\nenforces = [\"network\"]\n"),
        "test",
    )
    .unwrap_err()
    .to_string();
    assert!(bad.contains("unknown variant `network`"), "{bad}");
    assert!(bad.contains("enforces"), "{bad}");
    let err = engine_error(&format!(
        "{jupyter}[executor.statement]\nname = \"x\"\nenforces = []\n"
    ));
    assert!(err.contains("`enforces` of `x` is empty"), "{err}");
    let err = engine_error(&format!(
        "{jupyter}[executor.statement]\nname = \"\"\nenforces = [\"seccomp\"]\n"
    ));
    assert!(err.contains("`name` is empty"), "{err}");
    let err = engine_error(&format!("[executor]\nkind = \"native\"\n{STATEMENT}"));
    assert!(
        err.contains("`statement` applies to kind = \"jupyter\" only"),
        "{err}"
    );
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

    // With the operator's statement, the isolation layer lets it run and says so, in the
    // report and in the run's audit record.
    let state = tempfile::tempdir().unwrap();
    let engine = Engine::new(
        config(&format!("{section}{STATEMENT}"), state.path()),
        &[LayerName::Policy],
    )
    .unwrap();
    let req = engine.request(
        Caller::new("a", "t"),
        skill(),
        serde_json::json!({"n": [4, 5]}),
        LimitOverrides::default(),
    );
    let id = req.id.to_string();
    let out = engine.run(req).await.unwrap();
    assert_eq!(
        (out.status, out.exit_code),
        (Status::Ok, Some(2)),
        "{out:?}"
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got, serde_json::json!({"sum": 9}));
    let relied = out
        .findings
        .iter()
        .find(|f| f.rule_id == "isolation.operator_statement")
        .unwrap_or_else(|| panic!("no statement finding: {:?}", out.findings));
    assert!(relied.message.contains("`gw-in-vm`"), "{}", relied.message);
    assert!(
        relied.message.contains("network none"),
        "{}",
        relied.message
    );
    drop(engine);
    let trail = std::fs::read_to_string(state.path().join("audit.jsonl")).unwrap();
    let record: serde_json::Value = trail
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["kind"] == "execution" && r["request_id"] == id.as_str())
        .unwrap_or_else(|| panic!("no record of {id}: {trail}"));
    assert_eq!(
        record["spec"]["relied_on"],
        serde_json::json!({"name": "gw-in-vm", "enforces": ["isolation", "seccomp", "network_none"]}),
        "{record}"
    );
    assert!(
        record["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule_id"] == "isolation.operator_statement"),
        "{record}"
    );
}
