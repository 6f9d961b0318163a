//! The grants file and policy-test formats are documented with examples that work: the
//! example config names `examples/grants.json`, which grants a restricted skill to a group
//! (issue 20, item 15).
mod common;
use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn skillgate() -> Command {
    let mut c = Command::cargo_bin("skillgate").unwrap();
    c.current_dir(repo());
    c
}

fn json_blocks(text: &str) -> Vec<Value> {
    text.split("```json\n")
        .skip(1)
        .map(|b| serde_json::from_str(&b[..b.find("```").unwrap()]).unwrap())
        .collect()
}

fn read_json(rel: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(repo().join(rel)).unwrap()).unwrap()
}

#[test]
fn the_documented_examples_are_the_example_files_and_their_tests_pass() {
    let doc = std::fs::read_to_string(repo().join("docs/policy-files.md")).unwrap();
    let blocks = json_blocks(&doc);
    assert_eq!(blocks[0], read_json("examples/grants.json"));
    let test_file = read_json("examples/policy-tests/grants.json");
    let shown = blocks[1]["cases"].as_array().unwrap();
    assert_eq!(
        shown[..],
        test_file["cases"].as_array().unwrap()[..shown.len()]
    );

    let out = skillgate()
        .args(["policy", "test", "examples/policy-tests/grants.json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("3 cases, 0 failed"), "{stdout}");
}

#[test]
fn the_example_config_grants_the_restricted_skill_to_the_analysts() {
    let d = tempfile::tempdir().unwrap();
    let skill = d.path().join("quarterly-report");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    std::fs::copy(
        repo().join("examples/skills/analyze-rows/scripts/main.py"),
        skill.join("scripts/main.py"),
    )
    .unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: quarterly-report\ndescription: x\nmetadata:\n  skillgate.visibility: restricted\n  skillgate.owner: builder-alice\n  skillgate.tenant: acme\n---\n",
    )
    .unwrap();
    // Grants bind to the operator's catalogue record of the skill's digest, never to a
    // folder's name: record this folder as acme's restricted quarterly-report.
    let digest = skillgate()
        .args(["policy", "digest"])
        .arg(&skill)
        .output()
        .unwrap();
    assert!(digest.status.success());
    let digest = String::from_utf8(digest.stdout).unwrap();
    let config = common::example_config(d.path(), |t| t);
    let catalogue = d.path().join("catalogue.json");
    let mut records: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&catalogue).unwrap()).unwrap();
    records.push(serde_json::json!({
        "name": "quarterly-report", "tenant": "acme", "owner": "builder-alice",
        "visibility": "restricted", "digest": digest.trim(),
    }));
    std::fs::write(&catalogue, serde_json::to_string(&records).unwrap()).unwrap();
    let run = |agent: &str| {
        let out = skillgate()
            .arg("run")
            .arg(&skill)
            .args(["--input", "{\"query\": \"q\", \"data\": [1]}"])
            .arg("--config")
            .arg(&config)
            .args(["--agent", agent, "--format", "json", "--state-dir"])
            .arg(common::state_dir())
            .output()
            .unwrap();
        let r: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        r["status"].as_str().unwrap().to_string()
    };
    assert_eq!(run("analyst-1"), "ok");
    assert_eq!(run("alice-assistant"), "denied");
}
