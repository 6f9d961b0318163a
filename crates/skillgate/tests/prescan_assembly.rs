//! The pre-scan in the assembled pipeline: on by default, configured by `[prescan]`.
use skillgate::{Caller, Config, ExecRequest, Language, LayerName, Skill, Status, assemble};
use tower::ServiceExt;

fn run(config: &Config, code: &str) -> skillgate::ExecOutcome {
    // The policy layer (no entities: everyone denied) and the monitor (a state directory)
    // are not what these tests are about.
    let assembled =
        assemble::from_config(config, &[LayerName::Policy, LayerName::Monitor]).unwrap();
    let skill = Skill::builder("s", Language::Python, code.as_bytes().to_vec()).build();
    let req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(assembled.service.oneshot(req))
        .unwrap()
}

#[test]
fn dangerous_code_is_blocked_before_it_runs() {
    let out = run(
        &Config::default(),
        "import subprocess\nsubprocess.run(['id'])\n",
    );
    assert_eq!(out.status, Status::Blocked);
    assert_eq!(out.exit_code, None);
    assert!(out.findings.iter().all(|f| f.layer == LayerName::Prescan));
    assert_eq!(out.findings[0].rule_id, "py.process.subprocess");
}

#[test]
fn the_config_sets_the_threshold_and_the_unknown_module_action() {
    let cfg = skillgate::config::from_str("[prescan]\nunknown_module = \"block\"\n", "t").unwrap();
    let out = run(&cfg, "import yaml\n");
    assert_eq!(out.status, Status::Blocked);
    assert_eq!(out.findings[0].rule_id, "py.module.unlisted");
}

#[test]
fn a_rules_dir_that_does_not_load_refuses_to_assemble() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config {
        prescan: skillgate::config::PrescanConfig {
            rules_dir: Some(dir.path().to_path_buf()),
            ..Default::default()
        },
        ..Default::default()
    };
    let err = assemble::from_config(&cfg, &[]).unwrap_err();
    assert_eq!(err.layer, LayerName::Prescan);
    assert!(err.to_string().contains("python"), "{err}");
}
