//! `skillgate policy ...` and the policy layer in `skillgate run`: exit codes and JSON.
use assert_cmd::Command;

mod common;
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
            .args(["--entities", "examples/entities.json"])
            .args(["--catalogue", "examples/catalogue.json", "--format", "json"]),
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
        text.starts_with("deny") && text.contains("not in the entities file"),
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
        .arg("--state-dir")
        .arg(dir.path().join("state"))
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
        "publish policies: 3",
        "publish-own-skill",
        "publish-cross-tenant",
        "publish-other-owner",
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
fn list_skills_enumerates_what_an_agent_may_see() {
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
    // A discovery agent without the code right sees what it may not run (issue 21, item
    // 2: listing decides on `view`, as `check --action view` does).
    assert_eq!(list("catalogue-bot"), ["analyze-rows", "count-items"]);
    assert!(list("globex-agent").is_empty());
    assert!(list("intruder").is_empty());
}

#[test]
fn the_readme_command_passes_the_policy_layer_and_strangers_are_denied() {
    let state = tempfile::tempdir().unwrap();
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
                "--state-dir",
            ])
            .arg(state.path())
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
    assert!(
        report.to_string().contains("not in the entities file"),
        "{report}"
    );
}

/// Runs `cmd` and returns (exit code, stdout, stderr).
fn output(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A copy of examples/skills/analyze-rows named `name`, with its `skillgate.` metadata
/// for visibility, owner and tenant replaced by `metadata` (YAML lines).
fn fake_skill(parent: &Path, name: &str, metadata: &str) -> PathBuf {
    let src = root().join("examples/skills/analyze-rows");
    let dir = parent.join(name);
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    for f in ["input.schema.json", "scripts/main.py"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: A folder named after another skill.\nmetadata:\n{metadata}---\n"),
    )
    .unwrap();
    dir
}

fn check_json(skill: &Path, agent: &str, extra: &[&str]) -> (i32, serde_json::Value) {
    let out = skillgate()
        .args(["policy", "check", "--agent", agent, "--skill"])
        .arg(skill)
        .args(["--config", "examples/skillgate.toml", "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    (out.status.code().unwrap(), json(&out.stdout))
}

// Issue 21, item 1: SKILL.md does not decide its tenant, owner, visibility or grants.

#[test]
fn a_folder_named_after_a_granted_skill_runs_only_as_its_callers_own_code() {
    let dir = tempfile::tempdir().unwrap();
    let grants = dir.path().join("grants.json");
    std::fs::copy(root().join("rules/policies/tests/grants.json"), &grants).unwrap();
    let g = grants.display().to_string();
    let fake = fake_skill(
        dir.path(),
        "quarterly-report",
        "  skillgate.visibility: restricted\n  skillgate.tenant: acme\n  skillgate.owner: builder-alice\n",
    );
    let (code, d) = check_json(&fake, "analyst-2", &["--grants", &g]);
    assert_eq!(code, 0, "{d}");
    assert_eq!(
        d["reasons"],
        serde_json::json!(["own-code"]),
        "no grant: {d}"
    );
    // Claiming alice as owner makes it none of alice's agents' private skill either, and
    // a `public` skill claiming tenant globex is no skill of globex.
    let private = fake_skill(
        dir.path(),
        "alice-notes",
        "  skillgate.visibility: private\n  skillgate.owner: builder-alice\n",
    );
    let (_, d) = check_json(&private, "alice-assistant", &[]);
    assert_eq!(d["reasons"], serde_json::json!(["own-code"]), "{d}");
    let globex = fake_skill(
        dir.path(),
        "globex-public",
        "  skillgate.visibility: public\n  skillgate.tenant: globex\n",
    );
    let (_, d) = check_json(&globex, "analyst-1", &[]);
    assert_eq!(d["reasons"], serde_json::json!(["own-code"]), "{d}");
    // For globex's own agent it is just as much that agent's own code, in globex.
    let (code, d) = check_json(&globex, "globex-agent", &["--action", "view"]);
    assert_eq!(code, 0, "{d}");
    assert_eq!(d["reasons"], serde_json::json!(["own-code"]), "{d}");
}

#[test]
fn a_skill_md_disagreeing_with_the_catalogue_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let skill = fake_skill(
        dir.path(),
        "report",
        "  skillgate.visibility: public\n  skillgate.tenant: globex\n",
    );
    let (code, out, _) = output(skillgate().args(["policy", "digest"]).arg(&skill));
    assert_eq!(code, 0);
    let digest = out.trim();
    assert_eq!(digest.len(), 64, "{out}");
    let catalogue = dir.path().join("catalogue.json");
    std::fs::write(
        &catalogue,
        format!(r#"[{{"name": "report", "tenant": "acme", "visibility": "public", "digest": "{digest}"}}]"#),
    )
    .unwrap();
    let c = catalogue.display().to_string();
    let (code, d) = check_json(&skill, "analyst-1", &["--catalogue", &c]);
    assert_eq!(code, 1, "{d}");
    let message = d["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("skillgate.tenant") && message.contains("globex"),
        "{d}"
    );
}

#[test]
fn the_example_catalogue_holds_the_example_skills_digests() {
    let catalogue: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("examples/catalogue.json")).unwrap(),
    )
    .unwrap();
    for record in catalogue.as_array().unwrap() {
        let name = record["name"].as_str().unwrap();
        let (code, out, err) = output(
            skillgate()
                .args(["policy", "digest", "--format", "json"])
                .arg(format!("examples/skills/{name}")),
        );
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            &json(out.as_bytes()),
            record,
            "update examples/catalogue.json"
        );
    }
}

// Issue 21, item 5: `policy validate` refuses agents whose tenant, group or builder is not
// declared, and groups across tenants.

#[test]
fn validate_refuses_undeclared_and_cross_tenant_references() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("entities.json");
    let base = std::fs::read_to_string(root().join("examples/entities.json")).unwrap();
    for (from, to, needle) in [
        (
            r#"{"type": "AgentGroup", "id": "analysts"}]},
  {"uid": {"type": "Agent", "id": "analyst-2"}"#,
            r#"{"type": "AgentGroup", "id": "ghosts"}]},
  {"uid": {"type": "Agent", "id": "analyst-2"}"#,
            "ghosts",
        ),
        (
            r#""id": "globex-agent"},
   "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "globex"}},
             "can_execute_code": true, "quarantined": false},
   "parents": []"#,
            r#""id": "globex-agent"},
   "attrs": {"tenant": {"__entity": {"type": "Tenant", "id": "globex"}},
             "can_execute_code": true, "quarantined": false},
   "parents": [{"type": "AgentGroup", "id": "analysts"}]"#,
            "analysts",
        ),
    ] {
        let text = base.replace(from, to);
        assert_ne!(text, base, "{needle}");
        std::fs::write(&file, text).unwrap();
        let (code, _, err) = output(
            skillgate()
                .args(["policy", "validate", "--entities"])
                .arg(&file),
        );
        assert_eq!(code, 2, "{needle}: {err}");
        assert!(err.contains(needle), "{needle}: {err}");
    }
}

// Issue 21, item 6: one broken skill folder does not stop the listing.

#[test]
fn list_skills_skips_a_broken_folder_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["analyze-rows", "count-items"] {
        let to = dir.path().join(name);
        std::fs::create_dir_all(to.join("scripts")).unwrap();
        let from = root().join("examples/skills").join(name);
        for f in ["SKILL.md", "input.schema.json"] {
            std::fs::copy(from.join(f), to.join(f)).unwrap();
        }
        let script = if name == "analyze-rows" {
            "main.py"
        } else {
            "main.js"
        };
        std::fs::copy(
            from.join("scripts").join(script),
            to.join("scripts").join(script),
        )
        .unwrap();
    }
    let broken = dir.path().join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("SKILL.md"), "no frontmatter\n").unwrap();
    let (code, out, err) = output(
        skillgate()
            .args(["policy", "list-skills", "--agent", "analyst-1", "--skills"])
            .arg(dir.path())
            .args(["--config", "examples/skillgate.toml", "--format", "json"]),
    );
    assert_eq!(code, 0, "{err}");
    let names: Vec<String> = json(out.as_bytes())
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["analyze-rows", "count-items"]);
    assert!(err.contains("skipped") && err.contains("broken"), "{err}");
}

// Issue 21, item 8: a custom --policies folder adds to the base policies.

#[test]
fn a_custom_policies_folder_keeps_tenant_isolation_quarantine_and_the_code_right() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        root().join("rules/policies/visibility.cedar"),
        dir.path().join("visibility.cedar"),
    )
    .unwrap();
    let p = dir.path().display().to_string();
    for (agent, reason) in [
        ("globex-agent", "tenant-isolation"),
        ("suspended-1", "quarantine"),
        ("catalogue-bot", "no-code-right"),
    ] {
        let (code, d) = check_json(
            &root().join("examples/skills/analyze-rows"),
            agent,
            &["--policies", &p],
        );
        assert_eq!(code, 1, "{agent}: {d}");
        assert!(
            d["reasons"].as_array().unwrap().iter().any(|r| r == reason),
            "{agent}: {d}"
        );
    }
    let (code, out, _) = output(
        skillgate()
            .args(["policy", "validate", "--config", "examples/skillgate.toml"])
            .args(["--policies", &p]),
    );
    assert_eq!(code, 0);
    for id in ["tenant-isolation", "quarantine", "no-code-right"] {
        assert!(out.contains(id), "{id}: {out}");
    }
}

#[test]
fn a_base_policy_turned_off_by_name_shows_in_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let config = common::example_config(dir.path(), |t| {
        t.replace(
            "[policy]\n",
            "[policy]\ndisabled_base_policies = [\"quarantine\"]\n",
        )
    });
    let out = skillgate()
        .args([
            "run",
            "examples/skills/analyze-rows",
            "--input-file",
            "examples/skills/analyze-rows/sample-input.json",
            "--agent",
            "suspended-1",
            "--format",
            "json",
            "--disable",
            "prescan",
            "--state-dir",
        ])
        .arg(dir.path().join("state"))
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    let report = json(&out.stdout);
    assert_eq!(report["status"], "ok", "{report}");
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule_id"] == "policy.base-lifted"
                && f["message"].as_str().unwrap().contains("quarantine")),
        "{report}"
    );
    let (_, _, err) = output(
        skillgate()
            .args(["policy", "validate", "--config"])
            .arg(&config),
    );
    assert!(
        err.contains("quarantine") && err.contains("turned off"),
        "{err}"
    );
}

// Issue 21, item 10: the entities file decides a known agent's tenant.

#[test]
fn the_entities_file_decides_a_known_agents_tenant() {
    let state = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        output(
            skillgate()
                .args([
                    "run",
                    "examples/skills/analyze-rows",
                    "--input-file",
                    "examples/skills/analyze-rows/sample-input.json",
                    "--agent",
                    "analyst-1",
                    "--config",
                    "examples/skillgate.toml",
                    "--format",
                    "json",
                    "--state-dir",
                ])
                .arg(state.path())
                .args(extra),
        )
    };
    let (code, out, err) = run(&[]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(json(out.as_bytes())["status"], "ok");
    let (code, _, err) = run(&["--tenant", "globex"]);
    assert_eq!(code, 2);
    assert!(err.contains("acme") && err.contains("globex"), "{err}");
    // `monitor status` finds the agent under the same tenant (a quarantine is keyed by the
    // agent id alone, so `monitor release` needs no tenant: see monitor_cli.rs).
    let (code, out, err) = output(
        skillgate()
            .args([
                "monitor",
                "status",
                "--agent",
                "analyst-1",
                "--format",
                "json",
            ])
            .args(["--config", "examples/skillgate.toml", "--state-dir"])
            .arg(state.path()),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(out.as_bytes())[0]["tenant"], "acme", "{out}");
}

// A report never lets an unrecorded folder's SKILL.md claims pass for the operator's word:
// the run says it was the caller's own code; a catalogued skill's run says nothing of it.
#[test]
fn a_run_of_an_unrecorded_folder_says_it_ran_as_own_code() {
    let dir = tempfile::tempdir().unwrap();
    let globex = fake_skill(
        dir.path(),
        "globex-public",
        "  skillgate.visibility: public\n  skillgate.tenant: globex\n",
    );
    let run = |skill: &Path| {
        let (code, out, err) = output(
            skillgate()
                .arg("run")
                .arg(skill)
                .args(["--input", r#"{"query": "q", "data": [1]}"#])
                .args([
                    "--agent",
                    "analyst-1",
                    "--config",
                    "examples/skillgate.toml",
                ])
                .args(["--format", "json", "--state-dir"])
                .arg(dir.path().join("state")),
        );
        assert_eq!(code, 0, "{out}{err}");
        let report = json(out.as_bytes());
        let own: Vec<serde_json::Value> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule_id"] == "policy.own-code")
            .cloned()
            .collect();
        own
    };
    let own = run(&globex);
    assert_eq!(own.len(), 1, "{own:?}");
    assert_eq!(own[0]["severity"], "info");
    let message = own[0]["message"].as_str().unwrap();
    assert!(
        message.contains("analyst-1's own code") && message.contains("tenant acme"),
        "{message}"
    );
    assert!(run(&root().join("examples/skills/analyze-rows")).is_empty());
}

// Issue 15: `policy check-publish` asks the publish policies what `POST /v1/skills` asks.
#[test]
fn check_publish_decides_with_the_publish_policies() {
    let tmp = tempfile::tempdir().unwrap();
    let check = |skill: &Path, builder: &str, extra: &[&str]| {
        let out = skillgate()
            .args(["policy", "check-publish", "--builder", builder, "--skill"])
            .arg(skill)
            .args(["--config", "examples/skillgate.toml", "--format", "json"])
            .args(extra)
            .output()
            .unwrap();
        (out.status.code().unwrap(), json(&out.stdout))
    };
    let own = fake_skill(tmp.path(), "own", "  skillgate.visibility: public\n");
    let (code, d) = check(&own, "builder-alice", &[]);
    assert_eq!(
        (code, d["reasons"].clone()),
        (0, serde_json::json!(["publish-own-skill"])),
        "{d}"
    );
    let foreign = fake_skill(tmp.path(), "foreign", "  skillgate.tenant: globex\n");
    let (code, d) = check(&foreign, "builder-alice", &[]);
    assert_eq!(
        (code, d["reasons"].clone()),
        (1, serde_json::json!(["publish-cross-tenant"])),
        "{d}"
    );
    // An undeclared builder: nothing permits it.
    let (code, d) = check(&own, "ghost", &["--tenant", "acme"]);
    assert_eq!(code, 1, "{d}");
    assert!(
        d["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("not in the entities file")
    );
    // An operator folder forbidding a name pattern.
    let folder = tmp.path().join("publish");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(
        folder.join("names.cedar"),
        "@id(\"no-own\")\nforbid (principal, action, resource) when { resource.name like \"ow*\" };\n",
    )
    .unwrap();
    let dir = folder.to_str().unwrap();
    let (code, d) = check(&own, "builder-alice", &["--publish-policies", dir]);
    assert_eq!(
        (code, d["reasons"].clone()),
        (1, serde_json::json!(["no-own"])),
        "{d}"
    );
    // A broken one exits 2, naming the file.
    std::fs::write(
        folder.join("bad.cedar"),
        "@id(\"bad\") forbid (principal, action, resource) when { resource.nmae };\n",
    )
    .unwrap();
    let (code, _, stderr) = output(
        skillgate()
            .args([
                "policy",
                "check-publish",
                "--builder",
                "builder-alice",
                "--skill",
            ])
            .arg(&own)
            .args(["--publish-policies", dir]),
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("bad.cedar"), "{stderr}");
}
