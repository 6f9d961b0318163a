//! `[executor] kind = "kubernetes"`: the config is checked, and the whole pipeline runs a
//! skill with a runtime in a pod on the one-node cluster that `scripts/services up k8s`
//! starts (a cluster that cannot start fails the test, with the reason).
use skillgate::{Caller, Engine, Language, LayerName, LimitOverrides, Skill, Status};
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
fn the_kubernetes_keys_belong_to_it_alone_and_are_checked() {
    let err = engine_error("[executor]\nkind = \"native\"\nnamespace = \"x\"\n");
    assert!(
        err.contains("`namespace` applies to kind = \"kubernetes\" only"),
        "{err}"
    );
    let err =
        engine_error("[executor]\nkind = \"docker\"\nsocket = \"/x\"\negress_enforced = true\n");
    assert!(err.contains("`egress_enforced` applies"), "{err}");
    let err =
        engine_error("[executor]\nkind = \"kubernetes\"\nimage_pull_policy = \"Sometimes\"\n");
    assert!(err.contains("image_pull_policy `Sometimes`"), "{err}");
    let bad = skillgate::config::from_str(
        "[executor]\nkind = \"kubernetes\"\n[executor.runtime_classes]\nfast = \"x\"\n",
        "test",
    )
    .unwrap_err()
    .to_string();
    assert!(bad.contains("fast"), "{bad}");
    let ok = skillgate::config::from_str(
        "[executor]\nkind = \"kubernetes\"\n[executor.runtime_classes]\nmicro_vm = \"gvisor\"\n",
        "test",
    )
    .unwrap();
    assert_eq!(
        ok.executor.runtime_classes.unwrap()[&skillgate_core::RuntimeTier::MicroVm],
        "gvisor"
    );
}

/// A cluster the operator has not said enforces egress: the isolation layer refuses every
/// run before a pod is made (no cluster is needed to say no).
#[tokio::test]
async fn without_enforced_egress_every_run_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let text = "[executor]\nkind = \"kubernetes\"\nkubeconfig = \"/nonexistent\"\nnode_pids_limit = 66\nnode_seccomp_dir = \"/nonexistent\"\n";
    let engine = Engine::new(config(text, t.path()), &[LayerName::Policy]).unwrap();
    let skill = Skill::builder("s", Language::Python, b"print(1)".to_vec()).build();
    let req = engine.request(
        Caller::new("a", "t"),
        skill,
        serde_json::json!({}),
        LimitOverrides::default(),
    );
    let out = engine.run(req).await.unwrap();
    assert_eq!(out.status, Status::Error, "{out:?}");
    assert!(
        out.findings
            .iter()
            .any(|f| f.rule_id == "isolation.unenforceable" && f.message.contains("network none")),
        "{:?}",
        out.findings
    );
}

fn services(args: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/services");
    let out = Command::new(script).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "scripts/services {} failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

struct Stop;
impl Drop for Stop {
    fn drop(&mut self) {
        services(&["down", "k8s"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skillgate_runs_a_runtime_skill_in_a_pod() {
    let section = services(&["up", "k8s"]);
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
    services(&[
        "load",
        "k8s",
        archive.to_str().unwrap(),
        &skillgate_executors::kubernetes::runtime_image("python"),
    ]);

    let engine = Engine::new(cfg, &[LayerName::Policy]).unwrap();
    let code = b"import json,sys,os\nd=json.load(sys.stdin)\nprint(json.dumps({'sum': sum(d['n']), 'uid': os.getuid(), 'py': sys.executable}))\nprint('key=AKIAZ3MSJV4WXQ7LTN2H', file=sys.stderr)\n";
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
    // The output scan ran on the way back: the key on stderr is redacted.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("AKIAZ3MSJV4WXQ7LTN2H"), "{stderr}");
    assert!(stderr.contains("[REDACTED:aws-access-key-id]"), "{stderr}");
}
