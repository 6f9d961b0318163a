//! The README's examples run against the built binary: the quick start and its report,
//! every row of the status table with its exit code, the JSON report's fields, and every
//! command and flag of the "Command line" block. A README edit that the program does not
//! follow (or the reverse) fails here.
mod common;
use assert_cmd::Command;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn readme() -> String {
    std::fs::read_to_string(repo().join("README.md")).unwrap()
}

/// The fenced blocks of `lang` in the README, in order.
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let open = format!("```{lang}\n");
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(&open) {
        let body = &rest[i + open.len()..];
        let end = body.find("```").unwrap();
        out.push(body[..end].to_string());
        rest = &body[end..];
    }
    out
}

/// The section of the README under `## title`.
fn section(text: &str, title: &str) -> String {
    let start = text.find(&format!("## {title}\n")).unwrap();
    let body = &text[start + title.len() + 4..];
    body[..body.find("\n## ").unwrap_or(body.len())].to_string()
}

fn skillgate() -> Command {
    let mut c = Command::cargo_bin("skillgate").unwrap();
    c.current_dir(repo());
    c
}

/// Runs `skillgate ARGS` with a fresh state directory; (exit code, stdout, stderr).
fn run(args: &[String]) -> (i32, String, String) {
    let out = skillgate()
        .args(args)
        .arg("--state-dir")
        .arg(common::state_dir())
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn the_quick_start_runs_and_prints_the_report_the_readme_shows() {
    let text = readme();
    let quick = section(&text, "Quick start");
    let cmd = blocks(&quick, "sh")[0]
        .lines()
        .find_map(|l| l.strip_prefix("cargo run --release -p skillgate-cli -- "))
        .expect("the quick start runs the CLI through cargo")
        .to_string();
    let args: Vec<String> = cmd.split_whitespace().map(String::from).collect();
    let (code, stdout, stderr) = run(&args);
    assert_eq!(code, 0, "{stdout}{stderr}");

    let shown = &blocks(&quick, "text")[0];
    let (shown, got): (Vec<&str>, Vec<&str>) = (shown.lines().collect(), stdout.lines().collect());
    assert_eq!(shown.len(), got.len(), "shown:\n{shown:#?}\ngot:\n{stdout}");
    // The first line differs only in the time, the layers line only in the timings.
    let status_line = |l: &str| l.rsplit_once("  ").map(|(head, _)| head.to_string());
    assert_eq!(status_line(shown[0]), status_line(got[0]));
    assert!(got[0].ends_with(" ms"), "{}", got[0]);
    let layer_names = |l: &str| -> Vec<String> {
        l.trim_start_matches("layers: ")
            .split(", ")
            .map(|p| p.split(' ').next().unwrap().to_string())
            .collect()
    };
    let last = shown.len() - 1;
    assert_eq!(layer_names(shown[last]), layer_names(got[last]));
    // Everything between is the same, up to the host's enforcement details.
    for (s, g) in shown[1..last].iter().zip(&got[1..last]) {
        match s.split_once("sandbox.enforcement: ") {
            Some((head, _)) => assert!(g.starts_with(head), "{g}"),
            None => assert_eq!(s, g),
        }
    }
}

/// A run per row of the status table, producing that status.
fn scenario(status: &str, tmp: &Path) -> Vec<String> {
    let script = |name: &str, code: &str| {
        let p = tmp.join(name);
        std::fs::write(&p, code).unwrap();
        p.display().to_string()
    };
    let example = [
        "--config",
        "examples/skillgate.toml",
        "--agent",
        "analyst-1",
        "--tenant",
        "acme",
        "--format",
        "json",
    ];
    let bare = |file: String, extra: &[&str]| {
        let mut v = strings(&["run", "--code"]);
        v.push(file);
        v.extend(strings(&[
            "--lang",
            "python",
            "--disable",
            "policy",
            "--disable",
        ]));
        v.extend(strings(&["prescan", "--format", "json"]));
        v.extend(strings(extra));
        v
    };
    match status {
        "ok" => [
            strings(&["run", "examples/skills/analyze-rows", "--input-file"]),
            strings(&["examples/skills/analyze-rows/sample-input.json"]),
            strings(&example),
        ]
        .concat(),
        "denied" => [
            strings(&["run", "examples/skills/analyze-rows", "--input-file"]),
            strings(&["examples/skills/analyze-rows/sample-input.json"]),
            strings(&example)
                .into_iter()
                .map(|a| {
                    if a == "analyst-1" {
                        "nobody-known".into()
                    } else {
                        a
                    }
                })
                .collect(),
        ]
        .concat(),
        "blocked" => [
            strings(&[
                "run",
                "examples/skills/analyze-rows",
                "--input",
                "{\"rows\": 5}",
            ]),
            strings(&example),
        ]
        .concat(),
        "timeout" => bare(
            script("spin.py", "while True: pass\n"),
            &["--timeout", "1s"],
        ),
        "resource_exhausted" => bare(
            script(
                "bomb.py",
                "b = []\nwhile True: b.append(bytearray(16 << 20))\n",
            ),
            &["--memory", "64MiB"],
        ),
        "security_violation" => {
            let cfg = tmp.join("kill.toml");
            std::fs::write(&cfg, "[seccomp]\nviolation = \"kill\"\n").unwrap();
            let mut v = bare(
                script(
                    "ptrace.py",
                    "import ctypes\nctypes.CDLL(None).ptrace(0, 0, 0, 0)\n",
                ),
                &["--config"],
            );
            v.push(cfg.display().to_string());
            v
        }
        "error" => {
            let skill = tmp.join("broken");
            std::fs::create_dir_all(&skill).unwrap();
            std::fs::write(skill.join("SKILL.md"), "no frontmatter\n").unwrap();
            [
                strings(&["run"]),
                vec![skill.display().to_string()],
                strings(&example),
            ]
            .concat()
        }
        "—" => [
            strings(&[
                "run",
                "examples/skills/analyze-rows",
                "--input",
                "{not json",
            ]),
            strings(&example),
        ]
        .concat(),
        other => panic!("the README's status table has `{other}`, which this test cannot produce"),
    }
}

#[test]
fn every_status_of_the_table_comes_with_the_exit_code_it_names() {
    let text = readme();
    let table = section(&text, "Statuses and exit codes");
    let rows: BTreeMap<String, i32> = table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| status") && !l.starts_with("|--"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split(" | ").map(str::trim).collect();
            (
                cells[0].trim_matches('`').to_string(),
                cells.last().unwrap().parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(rows.len(), 8, "{rows:?}");
    let tmp = tempfile::tempdir().unwrap();
    for (status, want) in &rows {
        let args = scenario(status, tmp.path());
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, *want, "{status}: {stdout}{stderr}");
        if status == "—" {
            assert!(stdout.is_empty(), "no report on a usage error: {stdout}");
            assert!(stderr.starts_with("error: "), "{stderr}");
        } else {
            let r: Value = serde_json::from_str(&stdout)
                .unwrap_or_else(|e| panic!("{status}: {e}: {stdout}{stderr}"));
            assert_eq!(r["status"], status.as_str(), "{r:#}");
        }
    }
}

/// The backticked words of `text`.
fn ticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}

#[test]
fn the_json_report_has_the_fields_the_readme_lists() {
    let text = readme();
    let start = text.find("`--format json` prints one report").unwrap();
    let para = &text[start..start + text[start..].find("\n\n").unwrap()];
    let listed = ticked(para);
    let has = |k: &str| {
        listed.iter().any(|t| {
            t == k
                || t.contains(&format!("{k},"))
                || t.contains(&format!(" {k}"))
                || t.contains(&format!("{{{k}"))
        })
    };

    let tmp = tempfile::tempdir().unwrap();
    let writer = tmp.path().join("w.py");
    std::fs::write(
        &writer,
        "import os\nopen(os.path.join(os.environ['SKILLGATE_OUTPUT_DIR'], 'a.txt'), 'w').write('x')\nprint('{}')\n",
    )
    .unwrap();
    let (code, stdout, _) = run(&scenario_with_artifact(&writer));
    assert_eq!(code, 0, "{stdout}");
    let r: Value = serde_json::from_str(&stdout).unwrap();
    for key in r.as_object().unwrap().keys() {
        assert!(
            has(key),
            "report field `{key}` is not in the README: {listed:?}"
        );
    }
    for (list, obj) in [
        ("findings", &r["findings"][0]),
        ("artifacts", &r["artifacts"][0]),
        ("layers", &r["layers"][0]),
    ] {
        for key in obj
            .as_object()
            .unwrap_or_else(|| panic!("{list}: {r:#}"))
            .keys()
        {
            assert!(
                has(key),
                "{list} field `{key}` is not in the README: {listed:?}"
            );
        }
    }
}

fn scenario_with_artifact(script: &Path) -> Vec<String> {
    let mut v = strings(&["run", "--code"]);
    v.push(script.display().to_string());
    v.extend(strings(&[
        "--lang",
        "python",
        "--disable",
        "policy",
        "--format",
        "json",
    ]));
    v
}

/// `line` split at ` | ` outside brackets: `skillgate rules test [DIR] | list` is two
/// commands, `[--input JSON | --input-file PATH]` is one choice of flags.
fn top_level_segments(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut depth = 0i32;
    let bytes: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ => {}
        }
        if depth == 0
            && c == ' '
            && bytes.get(i + 1) == Some(&'|')
            && bytes.get(i + 2) == Some(&' ')
        {
            out.push(String::new());
            i += 3;
            continue;
        }
        out.last_mut().unwrap().push(c);
        i += 1;
    }
    out
}

fn help_of(cmd: &[String]) -> String {
    let out = skillgate().args(cmd).arg("--help").output().unwrap();
    assert!(
        out.status.success(),
        "`skillgate {} --help` failed",
        cmd.join(" ")
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn every_command_and_flag_of_the_command_line_block_exists() {
    let text = readme();
    let block = &blocks(&section(&text, "Command line"), "sh")[0];
    // The commands of the current line, each with its help text.
    let mut commands: Vec<(Vec<String>, String)> = Vec::new();
    let mut flags_checked = 0;
    for line in block.lines() {
        let line = line.split(" #").next().unwrap();
        let segments = top_level_segments(line);
        let mut targets: Vec<Vec<usize>> = Vec::new();
        if let Some(rest) = segments[0].strip_prefix("skillgate ") {
            commands.clear();
            let mut words = rest.split_whitespace();
            let cmd = words.next().unwrap().to_string();
            let sub = words.next().unwrap_or("");
            let is_sub = sub.starts_with(|c: char| c.is_ascii_lowercase())
                && sub
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '|' || c == '-');
            let firsts: Vec<Vec<String>> = if is_sub {
                sub.split('|')
                    .map(|s| vec![cmd.clone(), s.to_string()])
                    .collect()
            } else {
                vec![vec![cmd.clone()]]
            };
            targets.push((0..firsts.len()).collect());
            commands.extend(firsts.into_iter().map(|c| {
                let h = help_of(&c);
                (c, h)
            }));
            for seg in &segments[1..] {
                let c = vec![
                    cmd.clone(),
                    seg.split_whitespace().next().unwrap().to_string(),
                ];
                let h = help_of(&c);
                targets.push(vec![commands.len()]);
                commands.push((c, h));
            }
        } else {
            // A continuation line: flags of the commands of the line before.
            targets.push((0..commands.len()).collect());
        }
        for (seg, idx) in segments.iter().zip(&targets) {
            for flag in seg
                .split(|c: char| c.is_whitespace() || c == '[' || c == ']')
                .filter(|w| w.starts_with("--"))
            {
                let known = idx.iter().any(|&i| {
                    let h = &commands[i].1;
                    h.contains(&format!("{flag} ")) || h.contains(&format!("{flag}\n"))
                });
                let names: Vec<String> = idx.iter().map(|&i| commands[i].0.join(" ")).collect();
                assert!(
                    known,
                    "README: `skillgate {names:?}` takes {flag}, the program does not"
                );
                flags_checked += 1;
            }
        }
    }
    assert!(flags_checked >= 30, "only {flags_checked} flags checked");
}

/// The Sessions section's demo, run by bash exactly as written: from a folder whose
/// `examples` is the repository's, with `skillgate` on the PATH and a fresh state
/// directory (`$XDG_STATE_HOME/skillgate`) whose runtimes are kept in this target
/// directory. The chart it downloads is a PNG, the step killed in flight left no event,
/// and the step after the kill reads the state the recorded steps left.
#[test]
fn the_session_demo_runs_as_written_and_its_state_survives_the_kill_9() {
    let text = readme();
    let demo = blocks(&section(&text, "Sessions"), "sh")
        .into_iter()
        .find(|b| b.contains("kill -9"))
        .expect("the Sessions section has the demo block");
    // A fresh state directory but for its runtimes, installed once per target directory
    // (a runtime refuses to run from a path other than the one it was installed at).
    let state_home = Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme-session-demo");
    let state = state_home.join("skillgate");
    std::fs::create_dir_all(&state).unwrap();
    for entry in std::fs::read_dir(&state).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name() == Some("runtimes".as_ref()) {
            continue;
        }
        if path.file_name() == Some("session-workspaces".as_ref()) {
            // A run that failed may have left a workspace parked (mounted).
            for slot in std::fs::read_dir(&path).unwrap() {
                let _ = std::process::Command::new("umount")
                    .arg("-l")
                    .arg(slot.unwrap().path().join("ws"))
                    .stderr(std::process::Stdio::null())
                    .status();
            }
        }
        match path.is_dir() {
            true => std::fs::remove_dir_all(&path).unwrap(),
            false => std::fs::remove_file(&path).unwrap(),
        }
    }
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::os::unix::fs::symlink(repo().join("examples"), work.join("examples")).unwrap();
    let sg = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_skillgate"))
            .args(args)
            .current_dir(&work)
            .env("XDG_STATE_HOME", &state_home)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "skillgate {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    // From the wheel cache `scripts/install-test-deps` fills, so the demo's own
    // `runtime install` finds it installed and asks no index.
    let config = ["--config", "examples/skillgate.toml"];
    sg(&[
        &["runtime", "install", "python-data", "--offline"][..],
        &config,
    ]
    .concat());

    let bin = Path::new(env!("CARGO_BIN_EXE_skillgate")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let script = format!("set -eu\n{demo}\necho \"demo: $ID $!\"\n");
    let out = std::process::Command::new("timeout")
        .args(["600", "bash", "-c", &script])
        .current_dir(&work)
        .env("PATH", path)
        .env("XDG_STATE_HOME", &state_home)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the demo failed: {}\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = stdout
        .lines()
        .find_map(|l| l.strip_prefix("demo: "))
        .and_then(|l| l.split_once(' '))
        .map(|(id, _killed)| id)
        .unwrap();
    let answer = |key: &str| -> Value {
        stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
            .find(|v| v.get(key).is_some())
            .unwrap_or_else(|| panic!("no answer with `{key}` in:\n{stdout}"))
    };
    let cleaned = answer("totals");
    assert_eq!(
        (cleaned["rows"].as_u64(), cleaned["kept"].as_u64()),
        (Some(12), Some(9))
    );

    let chart = std::fs::read(work.join("chart.png")).expect("the demo downloads chart.png");
    assert!(
        chart.starts_with(b"\x89PNG\r\n\x1a\n"),
        "chart.png is not a PNG"
    );
    // After the kill: the clean table and the chart as the recorded steps left them.
    let summary = answer("chart_bytes");
    assert_eq!(summary["kept"], 9, "{summary}");
    assert_eq!(summary["total"], 1440.5, "{summary}");
    assert_eq!(summary["chart_bytes"].as_u64(), Some(chart.len() as u64));

    let who = [
        "--agent",
        "analyst-1",
        "--tenant",
        "acme",
        "--format",
        "json",
    ];
    let log: Vec<Value> =
        serde_json::from_str(&sg(&[&["session", "log", id][..], &config, &who].concat())).unwrap();
    let steps: Vec<String> = log
        .iter()
        .map(|e| match e["kind"]["kind"].as_str().unwrap() {
            "step" => e["kind"]["code"].as_str().unwrap().to_string(),
            other => other.to_string(),
        })
        .collect();
    let code =
        |name: &str| std::fs::read_to_string(repo().join("examples/sessions").join(name)).unwrap();
    assert_eq!(
        steps,
        [
            "upload".to_string(),
            code("clean.py"),
            code("chart.py"),
            code("summary.py")
        ],
        "the log holds the upload and the three recorded steps, nothing of the killed one"
    );
    // The last step parked the session's workspace at the head, with the clean table
    // (the killed step's wipe was undone: its workspace was rebuilt from the log); `rm`
    // unmounts it with the session.
    let slot = state.join("session-workspaces").join(id);
    let ticket: Value = serde_json::from_slice(&std::fs::read(slot.join("head")).unwrap()).unwrap();
    assert_eq!(ticket["seq"], 4, "{ticket}");
    let clean = std::fs::read_to_string(slot.join("ws/data/clean.csv")).unwrap();
    assert_eq!(clean.lines().count(), 10, "{clean}");
    sg(&[&["session", "rm", id][..], &config, &who].concat());
    assert!(!slot.exists(), "session rm removes its parked workspace");
}
