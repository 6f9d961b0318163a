//! What `examples/skillgate.toml` says about network settings is what the program does
//! (issue 20, item 16): its allow-list example loads and runs, a SKILL.md cannot ask for
//! network, and a destination without `cidr` is refused naming it.
mod common;
use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run_json(config: &Path, skill: &Path) -> (i32, Value, String) {
    let out = Command::cargo_bin("skillgate")
        .unwrap()
        .current_dir(repo())
        .arg("run")
        .arg(skill)
        .args([
            "--agent",
            "analyst-1",
            "--tenant",
            "acme",
            "--format",
            "json",
        ])
        .arg("--config")
        .arg(config)
        .arg("--state-dir")
        .arg(common::state_dir())
        .args([
            "--input-file",
            "examples/skills/analyze-rows/sample-input.json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let r = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code().unwrap(), r, stderr)
}

/// The example config with its commented `[network.tenants.acme]` example switched on.
fn example_with_tenant_allow_list(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(repo().join("examples/skillgate.toml")).unwrap();
    let mut on = false;
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            if l.starts_with("# [network.tenants.") {
                on = true;
            } else if !l.starts_with("# ") {
                on = false;
            }
            if on {
                l.trim_start_matches("# ").to_string()
            } else {
                l.to_string()
            }
        })
        .collect();
    let joined = lines.join("\n");
    assert!(
        joined.contains("\n[network.tenants.acme]\nmode = \"allow_list\""),
        "{joined}"
    );
    common::example_config(dir, |_| joined)
}

#[test]
fn the_documented_allow_list_ceiling_loads_and_a_folder_run_gets_no_network() {
    let d = tempfile::tempdir().unwrap();
    let cfg = example_with_tenant_allow_list(d.path());
    let (code, r, err) = run_json(&cfg, &repo().join("examples/skills/analyze-rows"));
    assert_eq!(code, 0, "{r} {err}");
    assert_eq!(r["status"], "ok");
}

#[test]
fn a_skill_md_cannot_ask_for_network() {
    let d = tempfile::tempdir().unwrap();
    let skill = d.path().join("analyze-rows");
    std::fs::create_dir_all(skill.join("scripts")).unwrap();
    let src = repo().join("examples/skills/analyze-rows");
    std::fs::copy(src.join("scripts/main.py"), skill.join("scripts/main.py")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: analyze-rows\ndescription: x\nmetadata:\n  skillgate.tenant: acme\n  skillgate.network: \"203.0.113.0/24\"\n---\n",
    )
    .unwrap();
    let (code, r, _) = run_json(&repo().join("examples/skillgate.toml"), &skill);
    assert_eq!(code, 1);
    assert_eq!(r["status"], "error");
    let msg = r["findings"][0]["message"].as_str().unwrap();
    assert!(msg.contains("skillgate.network"), "{msg}");
}

#[test]
fn a_destination_without_cidr_is_refused_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let cfg = d.path().join("skillgate.toml");
    std::fs::write(
        &cfg,
        "[network.tenants.acme]\nmode = \"allow_list\"\nallow = [{ host = \"api.example.com\" }]\n",
    )
    .unwrap();
    let (code, _, err) = run_json(&cfg, &repo().join("examples/skills/analyze-rows"));
    assert_eq!(code, 2);
    assert!(err.contains("cidr"), "{err}");
}
