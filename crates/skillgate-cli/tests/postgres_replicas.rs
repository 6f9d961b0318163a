//! Several skillgate processes on one PostgreSQL (`[store] url`): `skillgate run`
//! processes with separate state directories (as on separate machines) share the
//! monitor's strikes and quarantines, and each run has exactly one audit record. The
//! database is a real one, started by `scripts/services up postgres`; the test fails
//! with the reason when it cannot start.
mod common;
#[path = "../../../tests/support/postgres.rs"]
mod support;

use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// A folder with the `exit-three` skill, a strict rule pack (a non-zero exit is a
/// quarantine strike; three quarantine) and a config naming `url`.
fn setup(tmp: &Path, url: &str) -> (PathBuf, PathBuf) {
    let rules = common::strict_exit_rules(tmp, "rules");
    let skill = tmp.join("exit-three");
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
    let config = tmp.join("skillgate.toml");
    std::fs::write(
        &config,
        format!(
            "[policy]\nentities = {:?}\n\n[monitor]\nrules = {:?}\ndurability = \"flush\"\n\n[store]\nurl = {url:?}\n",
            entities.display().to_string(),
            rules.display().to_string()
        ),
    )
    .unwrap();
    (config, skill)
}

fn denied_by_quarantine(r: &serde_json::Value) -> bool {
    r["status"] == "denied"
        && r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["layer"] == "policy" && f["rule_id"] == "quarantine")
}

#[test]
fn runs_through_two_replicas_share_quarantines_and_record_each_run_once() {
    let url = support::fresh_database("cli_replicas");
    let tmp = tempfile::tempdir().unwrap();
    let (config, skill) = setup(tmp.path(), &url);
    let (a, b) = (tmp.path().join("replica-a"), tmp.path().join("replica-b"));

    // Three strikes, alternating replicas: neither recorded three itself.
    for state in [&a, &b, &a] {
        let r = common::run_report(state, &config, &skill, "analyst-1");
        assert_eq!(r["exit_code"], 3, "{r}");
    }
    // Quarantined by A's run; enforced by B (and by A).
    let denied = common::run_report(&b, &config, &skill, "analyst-1");
    assert!(denied_by_quarantine(&denied), "{denied}");
    assert!(denied_by_quarantine(&common::run_report(
        &a,
        &config,
        &skill,
        "analyst-1"
    )));
    // `policy check` of a third machine sees it too.
    let out = Command::cargo_bin("skillgate")
        .unwrap()
        .args([
            "policy",
            "check",
            "--agent",
            "analyst-1",
            "--format",
            "json",
            "--skill",
        ])
        .arg(&skill)
        .arg("--state-dir")
        .arg(tmp.path().join("replica-c"))
        .arg("--config")
        .arg(&config)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let d: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(
        d["reasons"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!("quarantine")),
        "{d}"
    );
    // `skillgate monitor`, from a machine with no runs of its own, shows the quarantine
    // the replicas share, and releases it for both.
    let monitor = |args: &[&str]| {
        Command::cargo_bin("skillgate")
            .unwrap()
            .arg("monitor")
            .args(args)
            .arg("--config")
            .arg(&config)
            .arg("--state-dir")
            .arg(tmp.path().join("replica-d"))
            .assert()
    };
    let out = monitor(&["status", "--agent", "analyst-1", "--format", "json"])
        .success()
        .get_output()
        .stdout
        .clone();
    let status: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(status[0]["quarantine"]["tenant"], "acme", "{status}");
    assert_eq!(status[0]["strikes"], 3, "{status}");
    let out = monitor(&["status"]).success().get_output().stdout.clone();
    assert!(
        String::from_utf8_lossy(&out).contains("analyst-1"),
        "{}",
        String::from_utf8_lossy(&out)
    );
    let out = monitor(&["release", "--agent", "analyst-1", "--by", "ops"])
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(
        String::from_utf8_lossy(&out).starts_with("released acme/analyst-1"),
        "{}",
        String::from_utf8_lossy(&out)
    );
    monitor(&["release", "--agent", "analyst-1"]).code(1);
    let out = monitor(&["metrics"]).success().get_output().stdout.clone();
    assert!(
        String::from_utf8_lossy(&out).contains("skillgate_quarantine_releases_total 1"),
        "{}",
        String::from_utf8_lossy(&out)
    );
    assert!(!tmp.path().join("replica-d").exists());
    // Released for both replicas: the next run through B runs (and strikes once again).
    let r = common::run_report(&b, &config, &skill, "analyst-1");
    assert_eq!(r["exit_code"], 3, "{r}");
    assert_eq!(
        support::psql(
            &url,
            "SELECT record::json->>'by' FROM monitor_audit WHERE kind = 'release'"
        ),
        "ops"
    );

    // Two processes at once, one per replica, for another agent: both run and are
    // recorded.
    let spawn = |state: &Path| {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("skillgate"))
            .args([
                "run",
                "--format",
                "json",
                "--agent",
                "analyst-2",
                "--tenant",
                "acme",
            ])
            .arg(&skill)
            .arg("--state-dir")
            .arg(state)
            .arg("--config")
            .arg(&config)
            .output()
            .unwrap()
    };
    let (left, right) = std::thread::scope(|s| {
        let l = s.spawn(|| spawn(&a));
        let r = s.spawn(|| spawn(&b));
        (l.join().unwrap(), r.join().unwrap())
    });
    for out in [left, right] {
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["exit_code"], 3, "{r}");
    }

    // Every run has exactly one audit record, in the database: 6 of analyst-1 (the fourth
    // and fifth denied, the sixth after the release), 2 of analyst-2; none in the
    // replicas' state directories.
    let per_agent = support::psql(
        &url,
        "SELECT record::json->'caller'->>'agent', count(*), count(DISTINCT request_id),
                sum((record::json->>'status' = 'denied')::int)
         FROM monitor_audit WHERE kind = 'execution' GROUP BY 1 ORDER BY 1",
    );
    assert_eq!(per_agent, "analyst-1|6|6|2\nanalyst-2|2|2|0");
    assert_eq!(
        support::psql(&url, "SELECT count(*) FROM monitor_events"),
        "8"
    );
    for state in [&a, &b] {
        assert!(!state.join("audit.jsonl").exists());
        assert!(!state.join("state.db").exists());
    }
}

#[test]
fn an_unreachable_database_refuses_the_run_naming_it_without_its_password() {
    let tmp = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://skillgate:hunter2@127.0.0.1:{port}/skillgate");
    let (config, skill) = setup(tmp.path(), &url);
    let out = Command::cargo_bin("skillgate")
        .unwrap()
        .args(["run", "--agent", "analyst-1", "--tenant", "acme"])
        .arg(&skill)
        .arg("--state-dir")
        .arg(tmp.path().join("state"))
        .arg("--config")
        .arg(&config)
        .assert()
        .failure()
        .get_output()
        .clone();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&format!(
            "postgres://skillgate:***@127.0.0.1:{port}/skillgate"
        )),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "{text}");
    assert!(!text.contains("\"exit_code\": 3"), "the skill ran: {text}");
}
