//! `skillgate policy ...` and the policy layer in `skillgate run`: exit codes and JSON.
use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn skillgate() -> Command {
    let mut cmd = Command::cargo_bin("skillgate").unwrap();
    cmd.current_dir(root());
    cmd
}

/// Runs `cmd`, asserts exit 0, and parses its stdout as JSON.
fn json_ok(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out.stdout)
}

fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(out)))
}

#[test]
fn check_allows_a_known_agent_with_exit_0() {
    let decision = json_ok(
        skillgate()
            .args(["policy", "check", "--agent", "analyst-1"])
            .args(["--skill", "examples/skills/analyze-rows"])
            .args(["--entities", "examples/entities.json", "--format", "json"]),
    );
    assert_eq!(
        decision,
        serde_json::json!({"decision": "allow", "reasons": ["public-skills"], "errors": []})
    );
}

#[test]
fn check_denies_with_exit_1_and_the_deciding_policy() {
    let out = skillgate()
        .args([
            "policy",
            "check",
            "--agent",
            "globex-agent",
            "--skill",
            "examples/skills/count-items",
        ])
        .args(["--config", "examples/skillgate.toml", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out.stdout);
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["reasons"], serde_json::json!(["tenant-isolation"]));

    // An agent nobody declared gains no rights.
    let out = skillgate()
        .args(["policy", "check", "--agent", "intruder", "--tenant", "acme"])
        .args([
            "--skill",
            "examples/skills/analyze-rows",
            "--config",
            "examples/skillgate.toml",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("deny") && text.contains("no-code-right"),
        "{text}"
    );
}

#[test]
fn broken_files_exit_2_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        "[\n  {\"uid\": {\"type\": \"Robot\", \"id\": \"r\"}, \"attrs\": {}, \"parents\": []}\n]",
    )
    .unwrap();
    let out = skillgate()
        .args([
            "policy",
            "check",
            "--agent",
            "a",
            "--skill",
            "examples/skills/analyze-rows",
            "--entities",
        ])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:2", bad.display())) && err.contains("Robot"),
        "{err}"
    );

    std::fs::write(
        dir.path().join("p.cedar"),
        "@id(\"x\")\npermit (principal, action, resource)\n",
    )
    .unwrap();
    let out = skillgate()
        .args(["policy", "validate", "--policies"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("p.cedar:"), "{err}");

    // The run command refuses to start too.
    let out = skillgate()
        .args([
            "run",
            "examples/skills/analyze-rows",
            "--input-file",
            "examples/skills/analyze-rows/sample-input.json",
        ])
        .args(["--agent", "analyst-1", "--tenant", "acme", "--entities"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("policy layer"));
}

#[test]
fn validate_lists_the_default_policies() {
    let out = skillgate()
        .args(["policy", "validate", "--config", "examples/skillgate.toml"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for id in [
        "tenant-isolation",
        "no-code-right",
        "quarantine",
        "public-skills",
        "private-skills",
        "restricted-grant",
    ] {
        assert!(text.contains(id), "{id} missing: {text}");
    }
}

#[test]
fn test_files_pass_with_0_and_fail_with_1() {
    let out = skillgate()
        .args([
            "policy",
            "test",
            "rules/policies/tests/default-policies.json",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(json(&out.stdout)["cases"].as_array().unwrap().len() > 10);

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.json");
    std::fs::write(
        &file,
        r#"{"cases": [{"name": "an unknown agent is not allowed", "agent": "x", "tenant": "acme",
            "skill": {"name": "s", "tenant": "acme", "visibility": "public"}, "expect": "allow"}]}"#,
    )
    .unwrap();
    let out = skillgate()
        .args(["policy", "test"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("FAIL an unknown agent"));

    std::fs::write(&file, r#"{"cases": [{"nme": 1}]}"#).unwrap();
    let out = skillgate()
        .args(["policy", "test"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn list_skills_enumerates_what_an_agent_may_execute() {
    let list = |agent: &str| {
        json_ok(
            skillgate()
                .args(["policy", "list-skills", "--agent", agent])
                .args([
                    "--skills",
                    "examples/skills",
                    "--config",
                    "examples/skillgate.toml",
                ])
                .args(["--format", "json"]),
        )
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap().to_string())
        .collect::<Vec<_>>()
    };
    assert_eq!(list("analyst-1"), ["analyze-rows", "count-items"]);
    assert!(list("catalogue-bot").is_empty());
    assert!(list("globex-agent").is_empty());
}

#[test]
fn the_readme_command_passes_the_policy_layer_and_strangers_are_denied() {
    let run = |agent: &str| {
        skillgate()
            .args([
                "run",
                "examples/skills/analyze-rows",
                "--input-file",
                "examples/skills/analyze-rows/sample-input.json",
            ])
            .args([
                "--agent",
                agent,
                "--tenant",
                "acme",
                "--config",
                "examples/skillgate.toml",
                "--format",
                "json",
            ])
            .output()
            .unwrap()
    };
    let out = run("analyst-1");
    let report = json(&out.stdout);
    assert_ne!(report["status"], "denied", "{report}");
    assert!(
        report.to_string().contains("\"policy\""),
        "the policy layer ran: {report}"
    );
    let out = run("intruder");
    assert_eq!(out.status.code(), Some(1));
    let report = json(&out.stdout);
    assert_eq!(report["status"], "denied", "{report}");
    assert!(report.to_string().contains("no-code-right"), "{report}");
}
