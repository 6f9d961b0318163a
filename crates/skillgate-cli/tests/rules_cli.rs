//! `skillgate rules explain|modules` over every pack, and custom secret rules checked
//! against their own examples when they load (issue 20, item 15).
use assert_cmd::Command;

fn skillgate() -> Command {
    Command::cargo_bin("skillgate").unwrap()
}

fn stdout_of(args: &[&str]) -> String {
    let out = skillgate().args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn explain_knows_secret_rules_and_monitor_detections() {
    let s = stdout_of(&["rules", "explain", "aws-access-key-id"]);
    assert!(
        s.starts_with("aws-access-key-id (secret rule, high, rules/secrets/"),
        "{s}"
    );
    assert!(
        s.contains("Regex: ") && s.contains("Examples (found):"),
        "{s}"
    );

    let m = stdout_of(&["rules", "explain", "monitor.secrets_in_output"]);
    assert!(
        m.starts_with("monitor.secrets_in_output (monitor detection, high, action alert"),
        "{m}"
    );
    assert!(m.contains("What it detects:"), "{m}");

    // Pre-scan rules still explain as before.
    let p = stdout_of(&["rules", "explain", "py.process.subprocess"]);
    assert!(
        p.contains("What it detects:") && p.contains("Why it is dangerous:"),
        "{p}"
    );

    let out = skillgate()
        .args(["rules", "explain", "no-such-rule"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("monitor detections"));
}

#[test]
fn modules_lists_the_allow_list_per_language() {
    let all = stdout_of(&["rules", "modules"]);
    let py = all.lines().find(|l| l.starts_with("python: ")).unwrap();
    let words: Vec<&str> = py.split_whitespace().collect();
    assert!(words.contains(&"json") && words.contains(&"time"), "{py}");
    let js = stdout_of(&["rules", "modules", "--lang", "javascript"]);
    assert!(
        js.starts_with("javascript: ") && js.lines().count() == 1,
        "{js}"
    );
    assert!(js.split_whitespace().any(|w| w == "fs"), "{js}");
    let sh = stdout_of(&["rules", "modules", "--lang", "shell"]);
    let words: Vec<&str> = sh.split_whitespace().collect();
    assert_eq!(words.first(), Some(&"shell:"), "{sh}");
    assert!(words.contains(&"sort") && !words.contains(&"curl"), "{sh}");
}

#[test]
fn a_custom_secret_rule_whose_example_does_not_match_is_refused_at_load() {
    let d = tempfile::tempdir().unwrap();
    let rules = d.path().join("acme.toml");
    std::fs::write(
        &rules,
        r#"
[[rule]]
id = "acme-token"
description = "ACME API token"
keywords = ["acme_"]
regex = '''\b(acme_[a-z0-9]{24})\b'''
examples = ["token = acme_NOT-A-MATCH"]
"#,
    )
    .unwrap();
    let input = d.path().join("out.txt");
    std::fs::write(&input, "nothing here\n").unwrap();
    let out = skillgate()
        .args(["scan", "output"])
        .arg(&input)
        .arg("--rules")
        .arg(&rules)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("acme-token") && err.contains("acme_NOT-A-MATCH"),
        "{err}"
    );
}
