//! `skillgate skill new|check` (issue 20, item 14).
mod common;
use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn skillgate() -> Command {
    let mut c = Command::cargo_bin("skillgate").unwrap();
    c.current_dir(repo());
    c
}

/// Runs `skill check` and returns (exit code, stdout).
fn check(dir: &Path, extra: &[&str]) -> (i32, String) {
    let out = skillgate()
        .args(["skill", "check"])
        .arg(dir)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn a_new_skill_of_either_language_passes_check_and_runs_ok() {
    let d = tempfile::tempdir().unwrap();
    for (name, lang) in [("hello-py", "python"), ("hello-js", "javascript")] {
        skillgate()
            .args([
                "skill", "new", name, "--lang", lang, "--tenant", "acme", "--dir",
            ])
            .arg(d.path())
            .assert()
            .success();
        let dir = d.path().join(name);
        for f in ["SKILL.md", "input.schema.json", "sample-input.json"] {
            assert!(dir.join(f).is_file(), "{f}");
        }
        let (code, out) = check(&dir, &[]);
        assert_eq!(code, 0, "{out}");
        let lines: Vec<&str> = out.lines().collect();
        assert!(
            lines.iter().any(|l| l.starts_with("ok   SKILL.md")),
            "{out}"
        );
        assert!(
            lines.iter().any(|l| l.starts_with("ok   input schema")),
            "{out}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("ok   pre-scan scripts/main.")),
            "{out}"
        );
        assert!(lines.iter().any(|l| l.starts_with("ok   runtime")), "{out}");
        assert!(out.contains("0 failed"), "{out}");

        let out = skillgate()
            .arg("run")
            .arg(&dir)
            .arg("--input-file")
            .arg(dir.join("sample-input.json"))
            .args([
                "--config",
                "examples/skillgate.toml",
                "--agent",
                "analyst-1",
            ])
            .args(["--tenant", "acme", "--format", "json", "--state-dir"])
            .arg(common::state_dir())
            .output()
            .unwrap();
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["status"], "ok", "{lang}: {r}");
        assert_eq!(out.status.code(), Some(0));
        assert!(
            r["stdout"]
                .as_str()
                .unwrap()
                .contains("Received 20 characters"),
            "{r}"
        );
    }
}

#[test]
fn new_refuses_a_bad_name_and_an_existing_folder() {
    let d = tempfile::tempdir().unwrap();
    let new = |name: &str| {
        skillgate()
            .args(["skill", "new", name, "--lang", "python", "--dir"])
            .arg(d.path())
            .output()
            .unwrap()
    };
    let out = new("Bad_Name");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("lowercase"));
    assert_eq!(new("twice").status.code(), Some(0));
    let out = new("twice");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists"));
}

fn scaffold(d: &Path, name: &str) -> PathBuf {
    skillgate()
        .args(["skill", "new", name, "--lang", "python", "--dir"])
        .arg(d)
        .assert()
        .success();
    d.join(name)
}

#[test]
fn check_prescans_every_code_file_not_only_the_entry() {
    let d = tempfile::tempdir().unwrap();
    let dir = scaffold(d.path(), "with-helper");
    std::fs::write(
        dir.join("scripts/helper.py"),
        "import subprocess\nsubprocess.run(['id'])\n",
    )
    .unwrap();
    let (code, out) = check(&dir, &[]);
    assert_eq!(code, 1, "{out}");
    let fail = out
        .lines()
        .find(|l| l.starts_with("FAIL pre-scan scripts/helper.py: block"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(fail.contains("subprocess"), "{fail}");
    assert!(
        out.contains("ok   pre-scan scripts/main.py: allow"),
        "{out}"
    );
}

#[test]
fn check_reports_a_bad_manifest_a_failing_sample_and_a_missing_runtime() {
    let d = tempfile::tempdir().unwrap();
    let dir = scaffold(d.path(), "bad-sample");
    std::fs::write(dir.join("sample-input.json"), "{\"text\": 5}").unwrap();
    let cfg = d.path().join("skillgate.toml");
    std::fs::write(&cfg, "[interpreters]\npython = \"/opt/none/python3\"\n").unwrap();
    let (code, out) = check(&dir, &["--config", cfg.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL input schema: sample-input.json fails it"),
        "{out}"
    );
    assert!(
        out.contains("FAIL runtime:") && out.contains("/opt/none/python3"),
        "{out}"
    );
    assert!(out.contains("2 failed"), "{out}");

    let dir = scaffold(d.path(), "bad-manifest");
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: other\ndescription: x\n---\n",
    )
    .unwrap();
    let (code, out) = check(&dir, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.starts_with("FAIL SKILL.md:") && out.contains("other"),
        "{out}"
    );

    // Not a skill folder at all: a usage error.
    let out = skillgate()
        .args(["skill", "check"])
        .arg(d.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
