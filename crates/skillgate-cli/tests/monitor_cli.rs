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

/// Runs the `exit-three` skill as `agent` of tenant `acme`; returns the JSON report.
fn run_exit3(state: &Path, config: &Path, skill: &Path, agent: &str) -> serde_json::Value {
    let out = skillgate()
        .args([
            "run", "--format", "json", "--agent", agent, "--tenant", "acme",
        ])
        .arg(skill)
        .arg("--state-dir")
        .arg(state)
        .arg("--config")
        .arg(config)
        .assert()
        .code(predicates::ord::lt(2))
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

/// The quarantine loop end to end: repeated violations quarantine the agent, the policy
/// layer then denies it, an operator releases it, and it runs again.
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
    let skill = tmp.path().join("exit-three");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: exit-three\ndescription: Fails on purpose.\nmetadata:\n  skillgate.tenant: acme\n  skillgate.owner: builder-alice\n  skillgate.visibility: public\n---\n",
    )
    .unwrap();
    std::fs::write(
        skill.join("scripts/main.py"),
        "import sys\nprint('{}')\nsys.exit(3)\n",
    )
    .unwrap();
    let entities = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/entities.json");
    let config = tmp.path().join("skillgate.toml");
    std::fs::write(
        &config,
        format!(
            "[policy]\nentities = {:?}\n\n[monitor]\nrules = {:?}\ndurability = \"flush\"\n",
            entities.display().to_string(),
            rules.display().to_string()
        ),
    )
    .unwrap();

    for _ in 0..3 {
        let r = run_exit3(&state, &config, &skill, "analyst-1");
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["exit_code"], 3, "{r}");
    }
    // Quarantined: the policy layer's quarantine forbid denies the next run.
    let denied = run_exit3(&state, &config, &skill, "analyst-1");
    assert_eq!(denied["status"], "denied", "{denied}");
    assert!(denied["exit_code"].is_null(), "{denied}");
    assert!(
        denied["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["layer"] == "policy" && f["rule_id"] == "quarantine"),
        "{denied}"
    );
    // Another agent of the tenant is not affected.
    let other = run_exit3(&state, &config, &skill, "analyst-2");
    assert_eq!(other["status"], "ok", "{other}");

    let out = stdout_of(
        &[
            "monitor",
            "status",
            "--agent",
            "analyst-1",
            "--tenant",
            "acme",
            "--format",
            "json",
        ],
        &state,
    );
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v[0]["agent"], "analyst-1");
    assert!(
        v[0]["quarantine"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("strict.exit")),
        "{v}"
    );
    let executions = v[0]["executions"].as_array().unwrap();
    assert!(executions.contains(&serde_json::json!(["ok", 3])), "{v}");
    assert!(
        executions.contains(&serde_json::json!(["denied", 1])),
        "{v}"
    );

    let metrics = stdout_of(&["monitor", "metrics"], &state);
    let metrics = String::from_utf8(metrics).unwrap();
    assert!(
        metrics.contains("skillgate_executions_total{status=\"ok\"} 4")
            && metrics.contains("skillgate_executions_total{status=\"denied\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("skillgate_quarantined_agents 1"),
        "{metrics}"
    );
    assert!(!metrics.contains("analyst-1"), "no per-agent labels");

    skillgate()
        .args([
            "monitor",
            "release",
            "--agent",
            "analyst-1",
            "--tenant",
            "acme",
            "--by",
            "oncall",
            "--state-dir",
        ])
        .arg(&state)
        .assert()
        .success();
    skillgate()
        .args([
            "monitor",
            "release",
            "--agent",
            "analyst-1",
            "--tenant",
            "acme",
            "--state-dir",
        ])
        .arg(&state)
        .assert()
        .code(1);
    let trail = std::fs::read_to_string(state.join("audit.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = trail
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[5]["kind"], "release");
    assert_eq!(lines[5]["by"], "oncall");
    assert!(lines[..5].iter().all(|l| l["kind"] == "execution"));

    // Released: the agent runs again.
    let again = run_exit3(&state, &config, &skill, "analyst-1");
    assert_eq!(again["status"], "ok", "{again}");
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

/// Issue 20, item 12: `state.db` was 0644 next to a 0600 audit trail.
#[cfg(unix)]
#[test]
fn the_state_is_private() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("new/state");
    let code = tmp.path().join("ok.py");
    std::fs::write(&code, "print('{}')\n").unwrap();
    skillgate()
        .args(["run", "--disable", "policy", "--lang", "python", "--code"])
        .arg(&code)
        .arg("--state-dir")
        .arg(&state)
        .assert()
        .success();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&state), 0o700);
    assert_eq!(mode(&tmp.path().join("new")), 0o700);
    for f in ["state.db", "state.db-wal", "state.db-shm", "audit.jsonl"] {
        let p = state.join(f);
        if f == "state.db" || f == "audit.jsonl" {
            assert!(p.exists(), "{f}");
        }
        if p.exists() {
            assert_eq!(mode(&p), 0o600, "{f}");
        }
    }
    // State written by an older skillgate is narrowed when opened.
    std::fs::set_permissions(
        state.join("state.db"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    skillgate()
        .args(["monitor", "status", "--state-dir"])
        .arg(&state)
        .assert()
        .success();
    assert_eq!(mode(&state.join("state.db")), 0o600);
}
