//! `skillgate run`: the report contract, exit codes, the schema gate, bad input, and the
//! supervisor's limits, through the real binary.
mod common;
use assert_cmd::Command;
use common::{example_config, state_dir};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn skillgate() -> Command {
    let mut c = Command::cargo_bin("skillgate").unwrap();
    c.current_dir(repo());
    c
}

/// The flags every run here takes: the example config and one of its agents for skill
/// folders; for bare scripts, the policy and pre-scan layers switched off: these tests are
/// about the run, not the gate.
fn context(args: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = vec!["--state-dir".into(), state_dir().display().to_string()];
    if args.contains(&"--code") {
        // Bare scripts here exercise the executor (forks, signals, the environment),
        // which the pre-scan would rightly block.
        v.extend(["--disable", "policy", "--disable", "prescan"].map(String::from));
    } else if !args.contains(&"--config") {
        v.extend(
            [
                "--config",
                "examples/skillgate.toml",
                "--agent",
                "analyst-1",
                "--tenant",
                "acme",
            ]
            .map(String::from),
        );
    }
    v
}

/// Runs and parses the JSON report; returns (exit code, report, stderr).
fn run_json(args: &[&str]) -> (i32, Value, String) {
    let out = skillgate()
        .arg("run")
        .args(args)
        .args(context(args))
        .args(["--format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}); stdout: {}; stderr: {stderr}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (out.status.code().unwrap(), report, stderr)
}

fn script(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p.display().to_string()
}

#[test]
fn analyze_rows_answers_in_json_with_the_full_report_shape() {
    let (code, r, _) = run_json(&[
        "examples/skills/analyze-rows",
        "--input-file",
        "examples/skills/analyze-rows/sample-input.json",
    ]);
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["status"], "ok");
    assert_eq!(r["exit_code"], 0);
    assert!(r["signal"].is_null());
    let answer: Value = serde_json::from_str(r["stdout"].as_str().unwrap()).unwrap();
    assert_eq!(answer["answer"], "Processed 3 rows for: monthly revenue");
    for key in [
        "stderr",
        "stdout_truncated",
        "stderr_truncated",
        "duration_ms",
        "findings",
        "artifacts",
        "layers",
    ] {
        assert!(r.get(key).is_some(), "report lacks `{key}`: {r}");
    }
    assert_eq!(r["stdout_truncated"], false);
    let layers: Vec<&str> = r["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert!(
        layers.contains(&"input") && layers.contains(&"executor"),
        "{layers:?}"
    );
    for l in r["layers"].as_array().unwrap() {
        assert!(l["duration_us"].is_u64(), "{l}");
    }
}

#[test]
fn count_items_answers_in_both_formats() {
    let (code, r, _) = run_json(&[
        "examples/skills/count-items",
        "--input-file",
        "examples/skills/count-items/sample-input.json",
    ]);
    assert_eq!(code, 0, "{r}");
    let answer: Value = serde_json::from_str(r["stdout"].as_str().unwrap()).unwrap();
    assert_eq!(answer["answer"], "Processed 4 items");
    assert!(answer["timestamp"].as_str().unwrap().starts_with("20"));

    let out = skillgate()
        .args([
            "run",
            "examples/skills/count-items",
            "--input",
            r#"{"items": [1, 2]}"#,
        ])
        .args(context(&["run"]))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("ok"), "{text}");
    assert!(text.contains("Processed 2 items"), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "no colour when stdout is not a terminal: {text}"
    );
}

#[test]
fn input_failing_the_schema_is_blocked_with_the_failing_path() {
    let (code, r, _) = run_json(&[
        "examples/skills/analyze-rows",
        "--input",
        r#"{"query": "q", "data": "not-an-array"}"#,
    ]);
    assert_eq!(code, 1);
    assert_eq!(r["status"], "blocked");
    assert!(r["exit_code"].is_null(), "the skill never ran: {r}");
    let f = &r["findings"][0];
    assert_eq!(f["layer"], "input");
    assert!(f["message"].as_str().unwrap().contains("/data"), "{f}");

    let (code, r, _) = run_json(&["examples/skills/analyze-rows", "--input", r#"{"data": []}"#]);
    assert_eq!(code, 1);
    assert!(
        r["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("query"),
        "{r}"
    );
}

/// A skill reads its input on stdin, `skillgate run` does not: JSON piped to it without
/// `--input-file -` is not the input, and the run says so instead of passing silently.
#[test]
fn input_piped_without_input_file_dash_is_named_not_silently_dropped() {
    let piped = r#"{"query": "q", "data": [{"month": "m", "revenue": 1}]}"#;
    let run = |extra: &[&str]| {
        let mut args = vec!["examples/skills/analyze-rows"];
        args.extend_from_slice(extra);
        let out = skillgate()
            .arg("run")
            .args(&args)
            .args(context(&args))
            .args(["--format", "json"])
            .write_stdin(piped)
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        (report, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (report, stderr) = run(&[]);
    assert_eq!(
        report["status"], "blocked",
        "the input was `{{}}`: {report}"
    );
    assert!(stderr.contains("stdin is not read"), "{stderr}");
    assert!(stderr.contains("--input-file -"), "{stderr}");

    let (report, stderr) = run(&["--input-file", "-"]);
    assert_eq!(report["status"], "ok", "{report} {stderr}");
    assert!(!stderr.contains("stdin is not read"), "{stderr}");

    // Nothing on stdin (a terminal, /dev/null): no note.
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("skillgate"))
        .current_dir(repo())
        .arg("run")
        .args(["examples/skills/analyze-rows"])
        .args(context(&["examples/skills/analyze-rows"]))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("stdin is not read"));
}

#[test]
fn non_zero_exit_is_status_ok_with_the_exit_code() {
    let t = tempfile::tempdir().unwrap();
    let f = script(
        t.path(),
        "fail.py",
        "import sys\nprint('bye', file=sys.stderr)\nsys.exit(3)\n",
    );
    let (code, r, _) = run_json(&["--code", &f, "--lang", "python"]);
    assert_eq!(r["status"], "ok");
    assert_eq!(r["exit_code"], 3);
    assert_eq!(r["stderr"], "bye\n");
    assert_eq!(code, 0);
}

fn expect_usage_error(args: &[&str], needle: &str) {
    let mut cmd = skillgate();
    cmd.args(args);
    if args.first() == Some(&"run") {
        cmd.args(context(args));
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(
        out.stdout.is_empty(),
        "{args:?}: no report on a usage error"
    );
    assert!(
        stderr.contains(needle),
        "{args:?}: `{stderr}` lacks `{needle}`"
    );
}

#[test]
fn bad_input_exits_2_naming_what_is_wrong() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().display().to_string();
    let code = script(t.path(), "x.py", "print(1)\n");
    let bad_cfg = script(t.path(), "bad.toml", "[limits]\nmemory_bytes = \"lots\"\n");
    let missing_interp = script(
        t.path(),
        "interp.toml",
        "[interpreters]\npython = \"/nonexistent/bin/python3\"\n",
    );

    expect_usage_error(&["run", &dir], "SKILL.md");
    // A SKILL.md that does not load is an `error` report instead (tests/errors.rs).
    expect_usage_error(&["run", "--code", &code, "--lang", "ruby"], "ruby");
    expect_usage_error(
        &[
            "run",
            "examples/skills/analyze-rows",
            "--input",
            "{not json",
        ],
        "not valid JSON",
    );
    expect_usage_error(
        &[
            "run",
            "examples/skills/analyze-rows",
            "--input-file",
            "/nonexistent/in.json",
        ],
        "/nonexistent/in.json",
    );
    expect_usage_error(
        &[
            "run",
            "examples/skills/analyze-rows",
            "--disable",
            "firewall",
        ],
        "firewall",
    );
    expect_usage_error(
        &["run", "examples/skills/analyze-rows", "--timeout", "soon"],
        "soon",
    );
    expect_usage_error(
        &["run", "examples/skills/analyze-rows", "--memory", "lots"],
        "lots",
    );
    expect_usage_error(
        &["run", "examples/skills/analyze-rows", "--config", &bad_cfg],
        "memory_bytes",
    );
    expect_usage_error(
        &[
            "run",
            "examples/skills/analyze-rows",
            "--config",
            "/nonexistent.toml",
        ],
        "/nonexistent.toml",
    );
    expect_usage_error(
        &[
            "run",
            "--code",
            &code,
            "--lang",
            "python",
            "--config",
            &missing_interp,
        ],
        "/nonexistent/bin/python3",
    );
    expect_usage_error(
        &["run", "examples/skills/analyze-rows", "--frobnicate"],
        "--frobnicate",
    );
    expect_usage_error(&["launch"], "launch");
}

#[test]
fn disabling_a_layer_warns() {
    let out = skillgate()
        .args([
            "run",
            "examples/skills/count-items",
            "--input",
            r#"{"items": []}"#,
            "--disable",
            "secrets",
        ])
        .args(context(&["run"]))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("secrets layer is disabled"));
}

#[test]
fn a_spinning_script_is_killed_at_the_wall_clock_limit() {
    let t = tempfile::tempdir().unwrap();
    let f = script(t.path(), "spin.py", "while True:\n    pass\n");
    let (code, r, _) = run_json(&["--code", &f, "--lang", "python", "--timeout", "1s"]);
    assert_eq!(code, 1);
    assert_eq!(r["status"], "timeout");
    assert_eq!(r["signal"], 9, "killed: {r}");
    // Killed by the limit, not before it.
    assert!(r["duration_ms"].as_u64().unwrap() >= 1000, "{r}");
}

#[test]
fn output_past_the_cap_is_dropped_and_flagged() {
    let t = tempfile::tempdir().unwrap();
    let f = script(
        t.path(),
        "flood.py",
        "import sys\nfor _ in range(3 * 1024):\n    sys.stdout.write('x' * 1024)\nprint('done', file=sys.stderr)\n",
    );
    let (_, r, _) = run_json(&["--code", &f, "--lang", "python"]);
    assert_eq!(r["stdout_truncated"], true);
    assert_eq!(r["stdout"].as_str().unwrap().len(), 1024 * 1024);
    assert_eq!(
        r["stderr"], "done\n",
        "the process ran to its end: the excess was drained"
    );
    assert_eq!(r["exit_code"], 0);
    assert_eq!(r["status"], "resource_exhausted");
    assert!(
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule_id"] == "limit.output_cap")
    );
}

#[test]
fn a_child_holding_stdout_open_does_not_stall_the_run() {
    let t = tempfile::tempdir().unwrap();
    // One child stays in the skill's process group, one leaves it with setsid; both keep
    // stdout open and outlive the skill.
    let f = script(
        t.path(),
        "orphan.py",
        "import os, time\n\
         if os.fork() == 0:\n    time.sleep(120)\n    os._exit(0)\n\
         if os.fork() == 0:\n    os.setsid()\n    time.sleep(120)\n    os._exit(0)\n\
         print('parent done', flush=True)\n",
    );
    let started = Instant::now();
    let (code, r, _) = run_json(&["--code", &f, "--lang", "python", "--timeout", "100s"]);
    let elapsed = started.elapsed();
    assert_eq!(code, 0, "{r}");
    assert_eq!(r["stdout"], "parent done\n");
    // The children sleep for 120 s: a run that waited for them would take that long.
    assert!(elapsed < Duration::from_secs(60), "took {elapsed:?}");
}

#[test]
fn files_in_the_output_directory_come_back_as_artifacts() {
    let t = tempfile::tempdir().unwrap();
    let f = script(
        t.path(),
        "art.py",
        "import os\nd = os.environ['SKILLGATE_OUTPUT_DIR']\n\
         open(os.path.join(d, 'chart.txt'), 'w').write('hello')\n\
         os.symlink('/etc/hostname', os.path.join(d, 'sneaky'))\nprint('{}')\n",
    );
    // The seccomp presets refuse symlink(2) already; without that layer the collector
    // itself must skip the planted link.
    let (code, r, _) = run_json(&["--code", &f, "--lang", "python", "--disable", "seccomp"]);
    assert_eq!(code, 0, "{r}");
    let arts = r["artifacts"].as_array().unwrap();
    assert_eq!(arts.len(), 1, "{r}");
    assert_eq!(arts[0]["name"], "chart.txt");
    assert_eq!(arts[0]["size"], 5);
    assert_eq!(
        arts[0]["sha256"],
        "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
    );
    assert_eq!(arts[0]["content_base64"], "aGVsbG8=");
    assert!(
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule_id"] == "artifact.symlink")
    );
}

#[test]
fn the_callers_environment_does_not_reach_the_skill() {
    let t = tempfile::tempdir().unwrap();
    let f = script(
        t.path(),
        "env.py",
        "import os, json\nprint(json.dumps(sorted(os.environ)))\n",
    );
    let args = ["run", "--code", &f, "--lang", "python", "--format", "json"];
    let out = skillgate()
        .env("SKILLGATE_TEST_SECRET", "hunter2")
        .args(args)
        .args(context(&args))
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<String> = serde_json::from_str(r["stdout"].as_str().unwrap()).unwrap();
    assert!(
        !names.iter().any(|n| n == "SKILLGATE_TEST_SECRET"),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n == "SKILLGATE_OUTPUT_DIR"),
        "{names:?}"
    );
}

// Issue 21, item 3: the limits the caller asks for, clamped like the isolation layer
// clamps them, are what the policy decides on.
#[test]
fn the_policy_sees_the_callers_limits_clamped_to_the_maxima() {
    let dir = tempfile::tempdir().unwrap();
    let policies = dir.path().join("policies");
    std::fs::create_dir(&policies).unwrap();
    std::fs::copy(
        repo().join("rules/policies/visibility.cedar"),
        policies.join("visibility.cedar"),
    )
    .unwrap();
    std::fs::write(
        policies.join("limits.cedar"),
        "@id(\"short-runs\")\nforbid (principal, action == Action::\"execute\", resource)\nwhen { context.limits.wall_timeout_ms > 8000 };\n",
    )
    .unwrap();
    let run = |config: &Path, extra: &[&str]| {
        let out = skillgate()
            .args([
                "run",
                "examples/skills/analyze-rows",
                "--input-file",
                "examples/skills/analyze-rows/sample-input.json",
                "--agent",
                "analyst-1",
                "--format",
                "json",
                "--policies",
            ])
            .arg(&policies)
            .arg("--config")
            .arg(config)
            .arg("--state-dir")
            .arg(state_dir())
            .args(extra)
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        report
    };
    let plain = example_config(dir.path(), |t| t);
    // SKILL.md asks for 5 s: allowed; the caller's 30 s: denied by the policy.
    assert_eq!(run(&plain, &[])["status"], "ok");
    let report = run(&plain, &["--timeout", "30s", "--memory", "1GiB"]);
    assert_eq!(report["status"], "denied", "{report}");
    assert_eq!(report["findings"][0]["rule_id"], "short-runs", "{report}");
    // With a maximum of 8 s the request is clamped before the policy sees it.
    let capped = dir.path().join("capped");
    std::fs::create_dir(&capped).unwrap();
    let capped = example_config(&capped, |t| {
        t.replace(
            "[isolation.max]\n",
            "[isolation.max]\nwall_timeout = \"8s\"\n",
        )
    });
    let report = run(&capped, &["--timeout", "30s"]);
    assert_eq!(report["status"], "ok", "{report}");
}

// Issue 21, items 1 and 10: a bare script belongs to its caller (its tenant, private to
// it) and runs when the agent may run code; the entities file gives the tenant.
#[test]
fn a_bare_script_runs_as_its_callers_own_code() {
    let dir = tempfile::tempdir().unwrap();
    let code = script(dir.path(), "hello.py", "print('{\"hi\": 1}')\n");
    let run = |agent: &str| {
        let out = skillgate()
            .args(["run", "--code", &code, "--lang", "python", "--agent", agent])
            .args(["--config", "examples/skillgate.toml", "--format", "json"])
            .arg("--state-dir")
            .arg(state_dir())
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let report = run("analyst-1");
    assert_eq!(report["status"], "ok", "{report}");
    assert_eq!(report["stdout"], "{\"hi\": 1}\n");
    let report = run("catalogue-bot");
    assert_eq!(report["status"], "denied", "{report}");
    assert_eq!(
        report["findings"][0]["rule_id"], "no-code-right",
        "{report}"
    );
}
