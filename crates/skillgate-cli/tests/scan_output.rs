//! `skillgate scan output`: formats, redaction, rule files and exit codes.
use assert_cmd::Command;
use predicates::prelude::PredicateBooleanExt;

const TEXT: &str = "ok line\nkey=AKIAZ3MSJV4WXQ7LTN2H\nurl postgres://app:s3cr3tP4ssw0rd@db/app\n";

fn skillgate() -> Command {
    Command::cargo_bin("skillgate").unwrap()
}

/// `scan output --format FORMAT -` on [`TEXT`]: exits 1 (secrets found); its JSON output.
fn scan_text_as(format: &str) -> serde_json::Value {
    let out = skillgate()
        .args(["scan", "output", "--format", format, "-"])
        .write_stdin(TEXT)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn json_findings_follow_the_contract_and_exit_1() {
    let v = scan_text_as("json");
    let f = &v["findings"];
    assert_eq!(f.as_array().unwrap().len(), 2);
    assert_eq!(f[0]["rule_id"], "aws-access-key-id");
    assert_eq!(
        (f[0]["line"].as_u64(), f[0]["column"].as_u64()),
        (Some(2), Some(5))
    );
    assert_eq!(
        (f[0]["start"].as_u64(), f[0]["end"].as_u64()),
        (Some(12), Some(32))
    );
    assert_eq!(f[0]["decoded_from"], serde_json::json!([]));
    assert_eq!(f[1]["rule_id"], "database-url-password");
    assert!(!v.to_string().contains("LTN2H"));
}

#[test]
fn redact_prints_the_text_with_secrets_replaced() {
    skillgate()
        .args(["scan", "output", "--redact", "-"])
        .write_stdin(TEXT)
        .assert()
        .code(1)
        .stdout("ok line\nkey=[REDACTED:aws-access-key-id]\nurl postgres://app:[REDACTED:database-url-password]@db/app\n");
}

#[test]
fn clean_input_exits_0_and_errors_exit_2() {
    skillgate()
        .args(["scan", "output", "-"])
        .write_stdin("nothing to see\n")
        .assert()
        .code(0)
        .stdout("");
    let err = skillgate()
        .args(["scan", "output", "/definitely/not/here"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    assert!(String::from_utf8_lossy(&err).contains("/definitely/not/here"));
}

#[test]
fn sarif_and_text_formats() {
    let v = scan_text_as("sarif");
    assert_eq!(v["version"], "2.1.0");
    let r = &v["runs"][0]["results"][0];
    assert_eq!(r["ruleId"], "aws-access-key-id");
    assert_eq!(
        r["locations"][0]["physicalLocation"]["region"]["startLine"],
        2
    );
    skillgate()
        .args(["scan", "output", "-"])
        .write_stdin(TEXT)
        .assert()
        .code(1)
        .stdout(predicates::str::contains("-:2:5: aws-access-key-id"));
}

#[test]
fn extra_rule_files_and_gitleaks_configs_load_and_bad_ones_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("acme.toml");
    std::fs::write(
        &rules,
        "[[rule]]\nid = \"acme-token\"\ndescription = \"ACME token\"\nkeywords = [\"acme_\"]\nregex = '''\\b(acme_[a-z0-9]{20})\\b'''\n",
    )
    .unwrap();
    skillgate()
        .args([
            "scan",
            "output",
            "--no-default-rules",
            "--format",
            "json",
            "--rules",
        ])
        .arg(&rules)
        .arg("-")
        .write_stdin("t=acme_abcdefghij0123456789 and AKIAZ3MSJV4WXQ7LTN2H")
        .assert()
        .code(1)
        .stdout(predicates::str::contains("acme-token"))
        .stdout(predicates::str::contains("aws-access-key-id").not());
    let gl = dir.path().join("gitleaks.toml");
    std::fs::write(&gl, "[[rules]]\nid = \"p12\"\npath = '''\\.p12$'''\n").unwrap();
    skillgate()
        .args(["scan", "output", "--gitleaks"])
        .arg(&gl)
        .arg("-")
        .write_stdin("clean")
        .assert()
        .code(0)
        .stderr(predicates::str::contains("`p12` not imported"));
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[[rule]]\nid = \"x\"\n").unwrap();
    skillgate()
        .args(["scan", "output", "--rules"])
        .arg(&bad)
        .arg("-")
        .write_stdin("clean")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("bad.toml"));
}
