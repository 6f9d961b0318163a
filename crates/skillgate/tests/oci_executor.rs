//! `[executor] kind = "oci"`: the config is checked, and the whole pipeline runs a skill
//! with a runtime in an OCI bundle under runc (a missing runc fails the test, with the
//! reason).
use skillgate::{Caller, Engine, Language, LayerName, LimitOverrides, Skill, Status};
use skillgate_runtime::InstallOptions;
use std::path::Path;

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
fn oci_keys_belong_to_it_and_a_missing_runtime_is_named() {
    let err = engine_error("[executor]\nkind = \"native\"\nstate_root = \"/tmp/x\"\n");
    assert!(
        err.contains("`state_root` applies to kind = \"oci\" only"),
        "{err}"
    );
    let err = engine_error("[executor]\nkind = \"oci\"\nsocket = \"/x.sock\"\n");
    assert!(
        err.contains("`socket` applies to kind = \"docker\" only"),
        "{err}"
    );
    let err = engine_error("[executor]\nkind = \"process\"\nruntime = \"runc\"\n");
    assert!(
        err.contains("`runtime` applies to kind = \"docker\" or \"oci\" only"),
        "{err}"
    );
    let err = engine_error("[executor]\nkind = \"oci\"\nruntime = \"/nonexistent/runsc\"\n");
    assert!(err.contains("/nonexistent/runsc"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skillgate_runs_a_runtime_skill_in_an_oci_bundle_under_runc() {
    let state = tempfile::tempdir().unwrap();
    let text = format!(
        "[executor]\nkind = \"oci\"\nruntime = \"runc\"\nstate_root = \"{}\"\n",
        state.path().join("oci").display()
    );
    let cfg = config(&text, state.path());
    let runtimes = skillgate::runtimes::Runtimes::from_config(&cfg).unwrap();
    runtimes
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

/// `[interpreters] python` is the interpreter of skills without a runtime on oci too:
/// one that is not there fails the run naming it (never a fall back to `python3`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_configured_interpreter_runs_skills_without_a_runtime() {
    let state = tempfile::tempdir().unwrap();
    let run = |python: &str| {
        let text = format!(
            "[executor]\nkind = \"oci\"\nstate_root = \"{}\"\n[interpreters]\npython = \"{python}\"\n",
            state.path().join("oci").display()
        );
        let engine = Engine::new(config(&text, state.path()), &[LayerName::Policy]).unwrap();
        let skill = Skill::builder(
            "s",
            Language::Python,
            b"import sys\nprint(sys.executable)\n".to_vec(),
        )
        .build();
        let req = engine.request(
            Caller::new("a", "t"),
            skill,
            serde_json::json!({}),
            LimitOverrides::default(),
        );
        async move { engine.run(req).await }
    };
    let out = run("/usr/bin/python3").await.unwrap();
    assert_eq!(out.status, Status::Ok, "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("/usr/bin/python3"),
        "{out:?}"
    );
    let err = run("/nonexistent/python9").await.map(|o| format!("{o:?}"));
    let text = match err {
        Ok(o) => o,
        Err(e) => e.to_string(),
    };
    assert!(text.contains("/nonexistent/python9"), "{text}");
}
