//! `skillgate scan code` and `skillgate rules`.
use assert_cmd::Command;
use std::io::Write;

fn skillgate() -> Command {
    Command::cargo_bin("skillgate").unwrap()
}

fn file(dir: &tempfile::TempDir, name: &str, body: &str) -> std::path::PathBuf {
    let p = dir.path().join(name);
    std::fs::File::create(&p)
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    p
}

#[test]
fn one_file_gives_one_json_object_and_exit_1_on_block() {
    let dir = tempfile::tempdir().unwrap();
    let p = file(
        &dir,
        "bad.py",
        "import json\nimport os\nos.system('id')  # nosec\n",
    );
    let out = skillgate()
        .args(["scan", "code", "--format", "json"])
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "block");
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule_id"] == "py.process.os-exec")
        .unwrap();
    assert_eq!(
        (f["line"].as_u64(), f["column"].as_u64()),
        (Some(3), Some(1))
    );
    assert_eq!(f["snippet"], "os.system");
    for key in ["severity", "message", "end_line", "end_column"] {
        assert!(f.get(key).is_some(), "{key}");
    }
}

#[test]
fn several_files_give_an_array_with_paths_and_the_language_follows_the_extension() {
    let dir = tempfile::tempdir().unwrap();
    file(
        &dir,
        "ok.js",
        "const fs = require('fs');\nconsole.log(fs.readFileSync('/dev/stdin', 'utf8'));\n",
    );
    file(&dir, "warn.py", "import yaml\n");
    file(&dir, "notes.txt", "eval('1')\n");
    let out = skillgate()
        .args(["scan", "code", "--format", "json"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let all = v.as_array().unwrap();
    assert_eq!(all.len(), 2);
    assert!(all[0]["path"].as_str().unwrap().ends_with("ok.js"));
    assert_eq!(all[0]["verdict"], "allow");
    assert_eq!(all[1]["verdict"], "warn");
}

#[test]
fn stdin_needs_a_language_and_text_shows_a_caret() {
    skillgate()
        .args(["scan", "code", "-"])
        .write_stdin("eval('1')")
        .assert()
        .code(2);
    let out = skillgate()
        .args(["scan", "code", "-", "--lang", "javascript"])
        .write_stdin("const x = 1;\nx + eval('1');\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("-:2:5: critical js.dynamic.eval"), "{text}");
    assert!(text.contains("2 | x + eval('1');"), "{text}");
    assert!(text.contains("  |     ^^^^"), "{text}");
}

#[test]
fn sarif_output_is_sarif_2_1_0() {
    let dir = tempfile::tempdir().unwrap();
    let p = file(&dir, "a.py", "import pickle\n");
    let out = skillgate()
        .args(["scan", "code", "--format", "sarif"])
        .arg(&p)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["version"], "2.1.0");
    let r = &v["runs"][0]["results"][0];
    assert_eq!(r["ruleId"], "py.deserialize.pickle");
    assert_eq!(r["level"], "error");
    assert_eq!(
        r["locations"][0]["physicalLocation"]["region"]["startLine"],
        1
    );
}

#[test]
fn unknown_extensions_and_bad_rule_dirs_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = file(&dir, "x.rb", "puts 1\n");
    let out = skillgate().args(["scan", "code"]).arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--lang"));
    std::fs::create_dir_all(dir.path().join("rules/python")).unwrap();
    std::fs::create_dir_all(dir.path().join("rules/javascript")).unwrap();
    file(
        &dir,
        "rules/python/bad.toml",
        "[[rule]]\nid = \"x\"\nseverity = \"severe\"\n",
    );
    file(&dir, "rules/javascript/ok.toml", "");
    let out = skillgate()
        .args(["rules", "test"])
        .arg(dir.path().join("rules"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.toml"));
}

#[test]
fn rules_test_list_and_explain() {
    let out = skillgate().args(["rules", "test"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains(" 0 failures"));
    let out = skillgate()
        .args(["rules", "list", "--lang", "javascript"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("js.dynamic.eval") && !text.contains("py.dynamic.exec"),
        "{text}"
    );
    let out = skillgate()
        .args(["rules", "explain", "py.coding.non-utf8"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("Why it is dangerous") && text.contains("utf-7"),
        "{text}"
    );
    skillgate()
        .args(["rules", "explain", "no.such.rule"])
        .assert()
        .code(2);
}

#[test]
fn a_failing_rule_example_fails_rules_test() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("python")).unwrap();
    std::fs::create_dir_all(dir.path().join("javascript")).unwrap();
    let rule = |id: &str, fact: &str, ok: &str| {
        format!(
            "[[rule]]\nid = \"{id}\"\nseverity = \"high\"\nmessage = \"m\"\nwhat = \"w\"\nwhy = \"y\"\nexample = \"e\"\nfacts = [\"{fact}\"]\nmust_match = [\"eval('1')\"]\nmust_not_match = [\"{ok}\"]\n"
        )
    };
    file(&dir, "python/r.toml", &rule("t.py", "ref:eval", "print(1)"));
    file(
        &dir,
        "javascript/r.toml",
        &rule("t.js", "ref:eval", "eval(2)"),
    );
    let out = skillgate()
        .args(["rules", "test"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("FAIL t.js") && text.contains("must_not_match[0]"),
        "{text}"
    );
    assert!(text.contains("2 rules, 4 examples, 1 failures"), "{text}");
}
