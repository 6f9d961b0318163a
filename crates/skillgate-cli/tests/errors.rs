//! Errors name the problem and the fix (issue 20, item 13).
mod common;
use assert_cmd::Command;
use std::path::Path;

fn skillgate() -> Command {
    Command::cargo_bin("skillgate").unwrap()
}

/// Runs and returns (exit code, stderr).
fn fails(cmd: &mut Command) -> (i32, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn scanning_a_missing_file_says_it_does_not_exist() {
    let (code, err) = fails(skillgate().args(["scan", "code", "/nonexistent"]));
    assert_eq!(code, 2);
    assert!(err.contains("/nonexistent does not exist"), "{err}");
}

fn skill_with_schema(dir: &Path, schema: &str) {
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    let name = dir.file_name().unwrap().to_str().unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: x\n---\n"),
    )
    .unwrap();
    std::fs::write(dir.join("scripts/main.py"), "print('{}')\n").unwrap();
    std::fs::write(dir.join("input.schema.json"), schema).unwrap();
}

#[test]
fn an_external_ref_in_a_schema_is_said_to_be_unsupported() {
    let d = tempfile::tempdir().unwrap();
    let skill = d.path().join("refs");
    skill_with_schema(
        &skill,
        r#"{"type": "object", "properties": {"a": {"$ref": "common.json#/a"}}}"#,
    );
    let out = skillgate()
        .arg("run")
        .arg(&skill)
        .args(["--disable", "policy", "--format", "json", "--state-dir"])
        .arg(common::state_dir())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["status"], "error");
    let msg = r["findings"][0]["message"].as_str().unwrap();
    assert!(
        msg.contains("common.json#/a") && msg.contains("external references are not supported"),
        "{msg}"
    );
}

#[test]
fn config_errors_show_where_a_relative_path_resolved_to() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("conf")).unwrap();
    std::fs::write(
        d.path().join("conf/skillgate.toml"),
        "[prescan]\nrules_dir = \"my-rules\"\n",
    )
    .unwrap();
    let script = d.path().join("s.py");
    std::fs::write(&script, "print('{}')\n").unwrap();
    let (code, err) = fails(
        skillgate()
            .current_dir(d.path())
            .args([
                "run",
                "--code",
                "s.py",
                "--lang",
                "python",
                "--disable",
                "policy",
            ])
            .args(["--config", "conf/skillgate.toml", "--state-dir"])
            .arg(common::state_dir()),
    );
    assert_eq!(code, 2);
    let want = d.path().join("conf/my-rules");
    assert!(err.contains(&want.display().to_string()), "{err}");
}

#[test]
fn a_missing_interpreter_path_is_not_said_to_be_off_path() {
    let d = tempfile::tempdir().unwrap();
    let cfg = d.path().join("skillgate.toml");
    std::fs::write(&cfg, "[interpreters]\npython = \"/opt/none/bin/python3\"\n").unwrap();
    let script = d.path().join("s.py");
    std::fs::write(&script, "print('{}')\n").unwrap();
    let (code, err) = fails(
        skillgate()
            .args(["run", "--code"])
            .arg(&script)
            .args(["--lang", "python", "--disable", "policy", "--config"])
            .arg(&cfg)
            .arg("--state-dir")
            .arg(common::state_dir()),
    );
    assert_ne!(code, 0);
    assert!(
        err.contains("/opt/none/bin/python3") && err.contains("does not exist"),
        "{err}"
    );
    assert!(!err.contains("not on PATH"), "{err}");
}

#[test]
fn a_rules_folder_with_one_language_says_both_are_needed_or_how_to_extend() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("python")).unwrap();
    std::fs::write(
        d.path().join("python/mine.toml"),
        "[modules]\nallowed = [\"json\"]\n",
    )
    .unwrap();
    let code_file = d.path().join("x.py");
    std::fs::write(&code_file, "import json\n").unwrap();
    let (code, err) = fails(
        skillgate()
            .args(["scan", "code", "--rules"])
            .arg(d.path())
            .arg(&code_file),
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("javascript/") && err.contains("extends"),
        "{err}"
    );
    // With `extends = "builtin"`, one language is enough.
    std::fs::write(d.path().join("pack.toml"), "extends = \"builtin\"\n").unwrap();
    skillgate()
        .args(["scan", "code", "--rules"])
        .arg(d.path())
        .arg(&code_file)
        .assert()
        .success();
}

#[test]
fn the_format_help_of_policy_and_monitor_does_not_describe_a_run_report() {
    for args in [
        &["policy", "check", "--help"][..],
        &["policy", "test", "--help"],
        &["monitor", "status", "--help"],
    ] {
        let out = skillgate().args(args).output().unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains("--format"), "{help}");
        assert!(
            !help.contains("exit code, time, output"),
            "{args:?}: {help}"
        );
    }
}

#[test]
fn a_bad_skill_md_is_an_error_report_with_exit_1_as_the_readme_says() {
    let d = tempfile::tempdir().unwrap();
    let skill = d.path().join("broken");
    skill_with_schema(&skill, "{}");
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: other-name\ndescription: x\n---\n",
    )
    .unwrap();
    for format in ["json", "text"] {
        let out = skillgate()
            .arg("run")
            .arg(&skill)
            .args(["--format", format, "--state-dir"])
            .arg(common::state_dir())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        if format == "json" {
            let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(r["status"], "error");
            assert_eq!(r["findings"][0]["rule_id"], "skill.invalid");
            let msg = r["findings"][0]["message"].as_str().unwrap();
            assert!(
                msg.contains("SKILL.md") && msg.contains("other-name"),
                "{msg}"
            );
        } else {
            assert!(stdout.starts_with("error "), "{stdout}");
        }
    }
    // A folder that is not there is a usage error: exit 2, no report.
    let (code, err) = fails(skillgate().arg("run").arg(d.path().join("missing")));
    assert_eq!(code, 2);
    assert!(err.contains("no skill folder at"), "{err}");
}
