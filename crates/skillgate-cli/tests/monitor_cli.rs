//! `skillgate run --state-dir` and `skillgate monitor status|release|metrics`.
mod common;

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

/// The quarantine loop end to end: repeated violations quarantine the agent, the policy
/// layer then denies it, an operator releases it, and it runs again.
#[test]
fn runs_share_state_and_an_operator_releases_a_quarantine() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    // A strict rule pack: a non-zero exit is a quarantine strike, three quarantine.
    let rules = common::strict_exit_rules(tmp.path(), "rules");
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
        let r = common::run_report(&state, &config, &skill, "analyst-1");
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["exit_code"], 3, "{r}");
    }
    // Quarantined: the policy layer's quarantine forbid denies the next run.
    let denied = common::run_report(&state, &config, &skill, "analyst-1");
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
    let other = common::run_report(&state, &config, &skill, "analyst-2");
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
            "--by",
            "oncall",
            "--state-dir",
        ])
        .arg(&state)
        .assert()
        .success();
    skillgate()
        .args(["monitor", "release", "--agent", "analyst-1", "--state-dir"])
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
    let again = common::run_report(&state, &config, &skill, "analyst-1");
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

/// A skill folder `name` of tenant `tenant` running `code`, with `schema` as its input
/// schema if given.
fn skill_folder(
    root: &Path,
    name: &str,
    tenant: &str,
    code: &str,
    schema: Option<&str>,
) -> std::path::PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    let schema_line = match schema {
        Some(s) => {
            std::fs::write(dir.join("input.schema.json"), s).unwrap();
            "  skillgate.input-schema: input.schema.json\n"
        }
        None => "",
    };
    std::fs::write(
        dir.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: A test skill.\nmetadata:\n  skillgate.tenant: {tenant}\n  skillgate.owner: builder-alice\n  skillgate.visibility: public\n{schema_line}---\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("scripts/main.py"), code).unwrap();
    dir
}

/// A config naming `entities`, `rules` (a folder of detection files, if given) and extra
/// `[monitor]` lines.
fn config_file(
    root: &Path,
    entities: &Path,
    rules: Option<&Path>,
    monitor: &str,
) -> std::path::PathBuf {
    let rules = rules
        .map(|r| format!("rules = {:?}\n", r.display().to_string()))
        .unwrap_or_default();
    std::fs::create_dir_all(root).unwrap();
    let config = root.join("skillgate.toml");
    std::fs::write(
        &config,
        format!(
            "[policy]\nentities = {:?}\n\n[monitor]\n{rules}durability = \"flush\"\n{monitor}",
            entities.display().to_string(),
        ),
    )
    .unwrap();
    config
}

/// Runs `skill` as `agent` of `tenant` with `extra` arguments; returns the JSON report.
fn run_json(
    state: &Path,
    config: &Path,
    skill: &Path,
    agent: &str,
    tenant: &str,
    extra: &[&str],
) -> serde_json::Value {
    let out = skillgate()
        .args([
            "run", "--format", "json", "--agent", agent, "--tenant", tenant,
        ])
        .args(extra)
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

fn has_finding(report: &serde_json::Value, rule: &str) -> bool {
    report["findings"]
        .as_array()
        .is_some_and(|f| f.iter().any(|f| f["rule_id"] == rule))
}

fn examples_entities() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/entities.json")
}

fn strict_rules(root: &Path, action: &str) -> std::path::PathBuf {
    let rules = root.join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(
        rules.join("strict.toml"),
        format!("[[detection]]\nid = \"strict.exit\"\nseverity = \"high\"\naction = \"{action}\"\nmessage = \"failed\"\nwhen = {{ kind = \"nonzero_exit\" }}\n"),
    )
    .unwrap();
    rules
}

/// Issue 21, item 4: a public skill whose input schema rejects everything blocked 7 calls
/// of `analyst-2` and quarantined it. The blocks count against the skill, which is
/// flagged; the agent keeps its rights.
#[test]
fn a_skill_whose_schema_rejects_everything_does_not_quarantine_its_caller() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let config = config_file(tmp.path(), &examples_entities(), None, "");
    let bad = skill_folder(
        tmp.path(),
        "rejects-all",
        "acme",
        "print('{}')\n",
        Some(r#"{"not": {}}"#),
    );
    let good = skill_folder(tmp.path(), "fine", "acme", "print('{}')\n", None);
    // Only a skill the operator recorded is the skill's doing: record `rejects-all`.
    publish(&config, &bad, "acme");
    let mut last = serde_json::Value::Null;
    for _ in 0..7 {
        last = run_json(&state, &config, &bad, "analyst-2", "acme", &[]);
        assert_eq!(last["status"], "blocked", "{last}");
    }
    assert!(has_finding(&last, "monitor.skill_flagged"), "{last}");
    assert!(!has_finding(&last, "monitor.block_burst"), "{last}");
    let ok = run_json(&state, &config, &good, "analyst-2", "acme", &[]);
    assert_eq!(ok["status"], "ok", "the agent keeps its rights: {ok}");

    let out = stdout_of(
        &[
            "monitor",
            "status",
            "--agent",
            "analyst-2",
            "--tenant",
            "acme",
            "--format",
            "json",
        ],
        &state,
    );
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(v[0]["quarantine"].is_null(), "{v}");
    assert_eq!(v[0]["strikes"], 0, "{v}");
    let out = stdout_of(&["monitor", "skills", "--format", "json"], &state);
    let flagged: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(flagged[0]["skill"], "rejects-all", "{flagged}");
    let digest = flagged[0]["digest"].as_str().unwrap().to_string();
    let metrics = String::from_utf8(stdout_of(&["monitor", "metrics"], &state)).unwrap();
    assert!(metrics.contains("skillgate_flagged_skills 1"), "{metrics}");
    assert!(
        metrics.contains("skillgate_skill_flags_total 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("skillgate_quarantines_total 0"),
        "{metrics}"
    );
    skillgate()
        .args([
            "monitor",
            "release",
            "--skill",
            &digest,
            "--by",
            "oncall",
            "--state-dir",
        ])
        .arg(&state)
        .assert()
        .success();
    let out = stdout_of(&["monitor", "skills", "--format", "json"], &state);
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&out).unwrap(),
        serde_json::json!([])
    );
}

/// Issue 21, item 9: the quarantine holds without the monitor layer, in `policy check` and
/// `policy list-skills`, and after the agent moves to another tenant.
#[test]
fn a_quarantine_holds_without_the_monitor_in_policy_commands_and_across_tenants() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("xdg/skillgate");
    let rules = strict_rules(tmp.path(), "quarantine");
    let config = config_file(tmp.path(), &examples_entities(), Some(&rules), "");
    let skills = tmp.path().join("skills");
    let failing = skill_folder(
        &skills,
        "exit-three",
        "acme",
        "import sys\nprint('{}')\nsys.exit(3)\n",
        None,
    );
    for _ in 0..3 {
        let r = run_json(&state, &config, &failing, "analyst-1", "acme", &[]);
        assert_eq!(r["exit_code"], 3, "{r}");
    }
    let quarantined = |r: &serde_json::Value| {
        r["status"] == "denied"
            && r["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["layer"] == "policy" && f["rule_id"] == "quarantine")
    };
    // Without the monitor layer.
    let r = run_json(
        &state,
        &config,
        &failing,
        "analyst-1",
        "acme",
        &["--disable", "monitor"],
    );
    assert!(quarantined(&r), "{r}");

    // `policy check` and `list-skills` see it: with --state-dir, and by default where
    // `run` keeps its state ($XDG_STATE_HOME/skillgate).
    let entities = examples_entities();
    for with_flag in [true, false] {
        let mut check = skillgate();
        check
            .env("XDG_STATE_HOME", tmp.path().join("xdg"))
            .args([
                "policy",
                "check",
                "--agent",
                "analyst-1",
                "--format",
                "json",
                "--skill",
            ])
            .arg(&failing)
            .arg("--entities")
            .arg(&entities);
        if with_flag {
            check.arg("--state-dir").arg(&state);
        }
        let out = check.assert().code(1).get_output().stdout.clone();
        let d: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert!(
            d["reasons"]
                .as_array()
                .unwrap()
                .contains(&serde_json::json!("quarantine")),
            "{d}"
        );
        let mut list = skillgate();
        list.env("XDG_STATE_HOME", tmp.path().join("xdg"))
            .args([
                "policy",
                "list-skills",
                "--agent",
                "analyst-1",
                "--format",
                "json",
                "--skills",
            ])
            .arg(&skills)
            .arg("--entities")
            .arg(&entities);
        if with_flag {
            list.arg("--state-dir").arg(&state);
        }
        let out = list.assert().success().get_output().stdout.clone();
        let l: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            l,
            serde_json::json!([]),
            "a quarantined agent may run nothing: {l}"
        );
    }
    // Another agent is listed (the check sees the quarantine, not a broken setup).
    let out = skillgate()
        .args([
            "policy",
            "list-skills",
            "--agent",
            "analyst-2",
            "--format",
            "json",
            "--skills",
        ])
        .arg(&skills)
        .arg("--entities")
        .arg(&entities)
        .arg("--state-dir")
        .arg(&state)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let l: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(l.as_array().map(Vec::len), Some(1), "{l}");

    // Moved to another tenant in the entities file: still quarantined.
    let moved = tmp.path().join("moved.json");
    let text = std::fs::read_to_string(&entities).unwrap();
    let text = text.replace(
        "\"id\": \"analyst-1\"},\n   \"attrs\": {\"tenant\": {\"__entity\": {\"type\": \"Tenant\", \"id\": \"acme\"}}",
        "\"id\": \"analyst-1\"},\n   \"attrs\": {\"tenant\": {\"__entity\": {\"type\": \"Tenant\", \"id\": \"globex\"}}",
    );
    let text = text.replace(
        "\"parents\": [{\"type\": \"AgentGroup\", \"id\": \"analysts\"}]},\n  {\"uid\": {\"type\": \"Agent\", \"id\": \"analyst-2\"}",
        "\"parents\": []},\n  {\"uid\": {\"type\": \"Agent\", \"id\": \"analyst-2\"}",
    );
    assert!(text.contains("\"id\": \"analyst-1\"},\n   \"attrs\": {\"tenant\": {\"__entity\": {\"type\": \"Tenant\", \"id\": \"globex\"}}"));
    std::fs::write(&moved, text).unwrap();
    let moved_config = config_file(&tmp.path().join("moved-config"), &moved, Some(&rules), "");
    let globex = skill_folder(
        &tmp.path().join("globex"),
        "globex-ok",
        "globex",
        "print('{}')\n",
        None,
    );
    let control = run_json(
        &state,
        &moved_config,
        &globex,
        "globex-agent",
        "globex",
        &[],
    );
    assert_eq!(
        control["status"], "ok",
        "the globex skill runs for a globex agent: {control}"
    );
    let r = run_json(&state, &moved_config, &globex, "analyst-1", "globex", &[]);
    assert!(quarantined(&r), "{r}");
}

/// Issue 21, item 7: after a throttle, every `skillgate run` process started with a full
/// quota of its own. The quota is kept in the state: separate runs share it.
#[test]
fn the_throttle_holds_across_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let rules = strict_rules(tmp.path(), "throttle");
    let config = config_file(
        tmp.path(),
        &examples_entities(),
        Some(&rules),
        "throttle_per_minute = 2\n",
    );
    let failing = skill_folder(
        tmp.path(),
        "exit-three",
        "acme",
        "import sys\nprint('{}')\nsys.exit(3)\n",
        None,
    );
    let first = run_json(&state, &config, &failing, "analyst-1", "acme", &[]);
    assert!(has_finding(&first, "monitor.throttle"), "{first}");
    let refused = (0..5)
        .map(|_| run_json(&state, &config, &failing, "analyst-1", "acme", &[]))
        .filter(|r| has_finding(r, "monitor.throttled"))
        .inspect(|r| assert_eq!(r["status"], "denied", "{r}"))
        .count();
    assert_eq!(refused, 3, "2 runs per minute pass, the rest are refused");
    let out = stdout_of(&["monitor", "status"], &state);
    assert!(String::from_utf8(out).unwrap().contains("throttled until"));
}

fn execution_records(state: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(state.join("audit.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|r| r["kind"] == "execution")
        .collect()
}

/// Issue 20, item 8: the audit trail recorded the configured defaults (`10s`, `256MiB`,
/// no seccomp) whatever the run was given. It records the spec the executor enforced.
#[test]
fn the_audit_trail_records_the_spec_the_executor_enforced() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let config = config_file(tmp.path(), &examples_entities(), None, "");
    std::fs::write(
        &config,
        std::fs::read_to_string(&config).unwrap() + "\n[isolation.max]\nwall_timeout = \"2s\"\n",
    )
    .unwrap();
    let skill = skill_folder(tmp.path(), "fine", "acme", "print('{}')\n", None);
    let r = run_json(
        &state,
        &config,
        &skill,
        "analyst-1",
        "acme",
        &["--timeout", "1s", "--memory", "64MiB"],
    );
    assert_eq!(r["status"], "ok", "{r}");
    let r = run_json(
        &state,
        &config,
        &skill,
        "analyst-1",
        "acme",
        &["--timeout", "30s"],
    );
    assert_eq!(r["status"], "ok", "{r}");
    let r = run_json(&state, &config, &skill, "catalogue-bot", "acme", &[]);
    assert_eq!(r["status"], "denied", "{r}");
    let records = execution_records(&state);
    assert_eq!(records.len(), 3);
    let limits = &records[0]["spec"]["limits"];
    assert_eq!(limits["wall_timeout"], "1s", "{}", records[0]);
    assert_eq!(limits["memory_bytes"], "64MiB", "{}", records[0]);
    let seccomp = &records[0]["spec"]["seccomp"];
    assert!(
        seccomp["name"].as_str().is_some_and(|n| !n.is_empty()),
        "{seccomp}"
    );
    assert_eq!(
        seccomp["sha256"].as_str().map(str::len),
        Some(64),
        "{seccomp}"
    );
    assert!(!records[0]["spec"]["network"].is_null(), "{}", records[0]);
    assert_eq!(
        records[1]["spec"]["limits"]["wall_timeout"], "2s",
        "clamped: {}",
        records[1]
    );
    assert!(
        records[2]["spec"].is_null(),
        "a denied request was given no sandbox: {}",
        records[2]
    );
    assert!(records.iter().all(|r| r["cancelled"] == false));
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

/// Records `skill` in a catalogue of `tenant` and names it in `config`'s `[policy]`.
fn publish(config: &Path, skill: &Path, tenant: &str) {
    let out = skillgate()
        .args(["policy", "digest"])
        .arg(skill)
        .output()
        .unwrap();
    assert!(out.status.success());
    let digest = String::from_utf8(out.stdout).unwrap();
    let name = skill.file_name().unwrap().to_str().unwrap();
    let catalogue = config.with_file_name("catalogue.json");
    std::fs::write(
        &catalogue,
        serde_json::json!([{
            "name": name, "tenant": tenant, "owner": "builder-alice",
            "visibility": "public", "digest": digest.trim(),
        }])
        .to_string(),
    )
    .unwrap();
    let text = std::fs::read_to_string(config).unwrap().replace(
        "[policy]\n",
        &format!(
            "[policy]\ncatalogue = {:?}\n",
            catalogue.display().to_string()
        ),
    );
    std::fs::write(config, text).unwrap();
}

// A folder no operator recorded is its caller's own code: its blocks are the agent's, so
// an agent cannot shed its strikes by wrapping blocked code in a fresh folder.
#[test]
fn blocks_of_an_unrecorded_folder_count_against_the_agent() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let config = config_file(tmp.path(), &examples_entities(), None, "");
    let bad = skill_folder(
        tmp.path(),
        "rejects-all",
        "acme",
        "print('{}')\n",
        Some(r#"{"not": {}}"#),
    );
    for _ in 0..7 {
        let r = run_json(&state, &config, &bad, "analyst-2", "acme", &[]);
        assert!(!has_finding(&r, "monitor.skill_flagged"), "{r}");
    }
    let out = stdout_of(&["monitor", "skills", "--format", "json"], &state);
    let flagged: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(flagged, serde_json::json!([]), "{flagged}");
    let out = stdout_of(
        &[
            "monitor",
            "status",
            "--agent",
            "analyst-2",
            "--format",
            "json",
        ],
        &state,
    );
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(
        v[0]["strikes"].as_u64() > Some(0) || !v[0]["quarantine"].is_null(),
        "the agent's own blocks count against it: {v}"
    );
}

/// The README's main command with the example config (durability `sync`): the trail holds
/// the run's intent, then its execution record, under one request id.
#[test]
fn a_run_leaves_its_intent_then_its_outcome_in_the_trail() {
    let tmp = tempfile::tempdir().unwrap();
    let state = tmp.path().join("state");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let skill = root.join("examples/skills/analyze-rows");
    let input = skill.join("sample-input.json");
    let report = run_json(
        &state,
        &root.join("examples/skillgate.toml"),
        &skill,
        "analyst-1",
        "acme",
        &["--input-file", input.to_str().unwrap()],
    );
    assert_eq!(report["status"], "ok", "{report}");
    let trail = std::fs::read_to_string(state.join("audit.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = trail
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<(&str, &str)> = records
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap(),
                r["request_id"].as_str().unwrap(),
            )
        })
        .collect();
    let id = records[0]["request_id"].as_str().unwrap();
    assert_eq!(kinds, [("intent", id), ("execution", id)], "{trail}");
    assert_eq!(records[1]["status"], "ok", "{trail}");
    assert_eq!(records[0]["caller"]["agent"], "analyst-1", "{trail}");
    assert_eq!(records[0]["skill"]["name"], "analyze-rows", "{trail}");
}
