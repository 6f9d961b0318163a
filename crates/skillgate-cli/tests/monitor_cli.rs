//! `skillgate run --state-dir` and `skillgate monitor status|release|metrics`.
use assert_cmd::Command;
use std::path::Path;

fn skillgate() -> Command {
    Command::cargo_bin("skillgate").unwrap()
}

/// Runs `skillgate ARGS --state-dir STATE`, expects success, returns stdout.
fn stdout_of(args: &[&str], state: &Path) -> Vec<u8> {
    skillgate()
        .args(args)
        .arg("--state-dir")
        .arg(state)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone()
}

fn run_exit3(state: &Path, config: &Path, agent: &str) {
    let code = state.parent().unwrap().join("exit3.py");
    std::fs::write(&code, "import sys\nprint('{}')\nsys.exit(3)\n").unwrap();
    skillgate()
        .args([
            "run", "--lang", "python", "--format", "json", "--agent", agent, "--code",
        ])
        .arg(&code)
        .arg("--state-dir")
        .arg(state)
        .arg("--config")
        .arg(config)
        .assert()
        .code(predicates::ord::lt(2));
}

#[test]
fn runs_share_state_and_an_operator_releases_a_quarantine() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    // A strict rule pack: a non-zero exit is a quarantine strike, three quarantine.
    let rules = tmp.path().join("rules");
    std::fs::create_dir(&rules).unwrap();
    std::fs::write(
        rules.join("strict.toml"),
        "[[detection]]\nid = \"strict.exit\"\nseverity = \"high\"\naction = \"quarantine\"\nmessage = \"failed\"\nwhen = { kind = \"nonzero_exit\" }\n",
    )
    .unwrap();
    let config = tmp.path().join("skillgate.toml");
    std::fs::write(
        &config,
        format!(
            "[monitor]\nrules = {:?}\ndurability = \"flush\"\n",
            rules.display().to_string()
        ),
    )
    .unwrap();

    for _ in 0..3 {
        run_exit3(&state, &config, "mallory");
    }
    let out = stdout_of(
        &[
            "monitor", "status", "--agent", "mallory", "--format", "json",
        ],
        &state,
    );
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v[0]["agent"], "mallory");
    assert!(
        v[0]["quarantine"]["reason"]
            .as_str()
            .unwrap()
            .contains("strict.exit"),
        "{v}"
    );
    assert_eq!(v[0]["executions"][0], serde_json::json!(["ok", 3]));

    let metrics = stdout_of(&["monitor", "metrics"], &state);
    let metrics = String::from_utf8(metrics).unwrap();
    assert!(
        metrics.contains("skillgate_executions_total{status=\"ok\"} 3"),
        "{metrics}"
    );
    assert!(
        metrics.contains("skillgate_quarantined_agents 1"),
        "{metrics}"
    );
    assert!(!metrics.contains("mallory"), "no per-agent labels");

    skillgate()
        .args([
            "monitor",
            "release",
            "--agent",
            "mallory",
            "--by",
            "oncall",
            "--state-dir",
        ])
        .arg(&state)
        .assert()
        .success();
    skillgate()
        .args(["monitor", "release", "--agent", "mallory", "--state-dir"])
        .arg(&state)
        .assert()
        .code(1);
    let trail = std::fs::read_to_string(state.join("audit.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = trail
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[3]["kind"], "release");
    assert_eq!(lines[3]["by"], "oncall");
    assert!(
        lines[..3]
            .iter()
            .all(|l| l["kind"] == "execution" && l["caller"]["agent"] == "mallory")
    );
}

#[test]
fn an_unusable_state_dir_is_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let code = tmp.path().join("ok.py");
    std::fs::write(&code, "print('{}')\n").unwrap();
    skillgate()
        .args(["run", "--lang", "python", "--code"])
        .arg(&code)
        .arg("--state-dir")
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("monitor"));
    skillgate()
        .args(["monitor", "status", "--state-dir"])
        .arg(tmp.path().join("never-used"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no monitor state"));
}
