//! `skillgate session` through the real binary, against SQLite and a real PostgreSQL:
//! new → upload → steps → download, and `kill -9` of the process during a step: the log
//! holds no half-written event, the lock is free again, and the next step rebuilds the
//! state.
mod common;
#[path = "../../../tests/support/postgres.rs"]
mod support;

use assert_cmd::Command;
use common::example_config;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

struct Ctx {
    config: PathBuf,
    state: PathBuf,
    _dir: tempfile::TempDir,
}

impl Ctx {
    fn new(url: Option<&str>) -> Ctx {
        Ctx::with_config(|text| match url {
            Some(url) => text.replace("[store]\n", &format!("[store]\nurl = {url:?}\n")),
            None => text,
        })
    }

    /// The example config changed by `edit`, in a folder of its own.
    fn with_config(edit: impl FnOnce(String) -> String) -> Ctx {
        let dir = tempfile::tempdir().unwrap();
        let config = example_config(dir.path(), edit);
        Ctx {
            config,
            state: dir.path().join("state"),
            _dir: dir,
        }
    }

    /// The example config with the default policies plus one that grants `run_command`
    /// (shell steps) to the analysts, for their own steps.
    fn with_shell_grant() -> Ctx {
        let dir = tempfile::tempdir().unwrap();
        let config = common::example_config_with_shell_grant(dir.path());
        Ctx {
            config,
            state: dir.path().join("state"),
            _dir: dir,
        }
    }

    /// `exec ID --sh CMD --format json`: whether it exited 0, and its JSON.
    fn exec_sh(&self, id: &str, cmd: &str) -> (bool, serde_json::Value) {
        let out = self
            .cmd(&["exec", id, "--sh", cmd, "--format", "json"])
            .output()
            .unwrap();
        let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "exec --sh {cmd:?}: {e}: {}\n{}",
                String::from_utf8_lossy(&out.stderr),
                String::from_utf8_lossy(&out.stdout)
            )
        });
        (out.status.success(), json)
    }

    fn args(&self) -> Vec<String> {
        vec![
            "--config".into(),
            self.config.display().to_string(),
            "--state-dir".into(),
            self.state.display().to_string(),
            "--agent".into(),
            "analyst-1".into(),
            "--tenant".into(),
            "acme".into(),
        ]
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::cargo_bin("skillgate").unwrap();
        c.arg("session").args(args).args(self.args());
        c
    }

    /// Runs and returns stdout; panics with stderr unless the exit code is `code`.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.cmd(args).output().unwrap();
        assert!(
            out.status.success(),
            "session {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn script(&self, name: &str, code: &str) -> String {
        let p = self._dir.path().join(name);
        std::fs::write(&p, code).unwrap();
        p.display().to_string()
    }

    fn exec(&self, id: &str, script: &str) -> serde_json::Value {
        let out = self.ok(&[
            "exec", id, "--code", script, "--lang", "python", "--format", "json",
        ]);
        serde_json::from_str(&out).unwrap()
    }

    fn log(&self, id: &str) -> Vec<serde_json::Value> {
        serde_json::from_str(&self.ok(&["log", id, "--format", "json"])).unwrap()
    }

    /// Where session `id`'s workspace is parked between commands.
    fn slot(&self, id: &str) -> PathBuf {
        self.state.join("session-workspaces").join(id)
    }

    /// Whether a file system is mounted on `dir`.
    fn mounted(&self, dir: &Path) -> bool {
        mount_points().iter().any(|m| m == dir)
    }
}

/// The mount points of this mount namespace.
fn mount_points() -> Vec<PathBuf> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter_map(|l| l.split(' ').nth(4).map(PathBuf::from))
        .collect()
}

/// The workspaces a test's commands parked in its state directory are unmounted with it.
impl Drop for Ctx {
    fn drop(&mut self) {
        let lot = self.state.join("session-workspaces");
        for m in mount_points() {
            if m.starts_with(&lot) {
                let _ = std::process::Command::new("umount")
                    .arg("-l")
                    .arg(&m)
                    .status();
            }
        }
    }
}

fn kill_during_a_step(ctx: &Ctx) {
    let id = ctx.ok(&["new"]).trim().to_string();
    let csv = ctx.script("data.csv", "n\n1\n2\n3\n");
    ctx.ok(&["upload", &id, &csv, "data.csv"]);
    let sum = ctx.script(
        "sum.py",
        "total = sum(int(l) for l in open('data.csv').read().split()[1:])\nopen('total.txt','w').write(str(total))\nprint(total)\n",
    );
    let r = ctx.exec(&id, &sum);
    assert_eq!(r["report"]["status"], "ok", "{r}");
    assert_eq!(r["report"]["stdout"].as_str().unwrap().trim(), "6");
    assert_eq!(r["seq"], 2);

    // A step that writes into the workspace, then hangs: killed mid-way.
    let hang = ctx.script(
        "hang.py",
        "open('total.txt','w').write('half-written')\nprint('started', flush=True)\nimport time\ntime.sleep(60)\n",
    );
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("skillgate"))
        .arg("session")
        .args(["exec", &id, "--code", &hang, "--lang", "python"])
        .args(ctx.args())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The step is running once its sandbox exists: wait for a process under this one.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !has_descendant(child.id()) {
        assert!(Instant::now() < deadline, "the step never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let log = ctx.log(&id);
    assert_eq!(log.len(), 2, "no event of the killed step: {log:?}");

    // It had taken over the workspace the step before parked (its ticket is gone) and
    // changed it.
    let slot = ctx.slot(&id);
    assert!(
        !slot.join("head").exists(),
        "the killed step held the workspace"
    );
    assert_eq!(
        std::fs::read_to_string(slot.join("ws/total.txt")).unwrap(),
        "half-written"
    );

    // The lock died with the process; the next step does not continue that workspace:
    // it is restored from the log, and the state is the recorded one.
    let read = ctx.script("read.py", "print(open('total.txt').read())\n");
    let r = ctx.exec(&id, &read);
    assert_eq!(r["report"]["stdout"].as_str().unwrap().trim(), "6", "{r}");
    assert_eq!(r["seq"], 3);
    assert_eq!(r["restored"]["warm"], false, "{r}");
    // The one after continues the workspace that step parked.
    let r = ctx.exec(&id, &read);
    assert_eq!(r["report"]["stdout"].as_str().unwrap().trim(), "6", "{r}");
    assert_eq!(r["restored"]["parked"], true, "{r}");
    assert_eq!(r["restored"]["replayed"], 0, "{r}");
    let out = ctx.ok(&["download", &id, "total.txt"]);
    assert_eq!(out, "6");
    let replay: serde_json::Value =
        serde_json::from_str(&ctx.ok(&["replay", &id, "--cold", "--format", "json"])).unwrap();
    assert_eq!(replay["restored"]["replayed"], 4, "{replay}");
    assert!(replay["restored"]["divergence"].is_null(), "{replay}");

    // `rm` unmounts the parked workspace and removes it with the session.
    assert!(ctx.mounted(&slot.join("ws")));
    ctx.ok(&["rm", &id]);
    assert!(!slot.exists() && !ctx.mounted(&slot.join("ws")));
}

/// Whether process `pid` has a child (the sandbox of its step), started by any of its
/// threads.
fn has_descendant(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(Path::new("/proc").join(pid.to_string()).join("task")) else {
        return false;
    };
    tasks.filter_map(Result::ok).any(|t| {
        std::fs::read_to_string(t.path().join("children")).is_ok_and(|s| !s.trim().is_empty())
    })
}

#[test]
fn sqlite_kill_9_during_a_step_leaves_no_half_written_event() {
    kill_during_a_step(&Ctx::new(None));
}

#[test]
fn postgres_kill_9_during_a_step_leaves_no_half_written_event() {
    let url = support::fresh_database("cli_session_kill");
    kill_during_a_step(&Ctx::new(Some(&url)));
}

#[test]
fn bad_input_is_refused_with_a_clear_error() {
    let ctx = Ctx::new(None);
    let out = ctx.cmd(&["log", "not-an-id"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a session id"));
    let id = ctx.ok(&["new"]).trim().to_string();
    let csv = ctx.script("x.csv", "x");
    let out = ctx
        .cmd(&["upload", &id, &csv, "../escape"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must not contain"));
    // Another agent does not see it.
    let out = Command::cargo_bin("skillgate")
        .unwrap()
        .args(["session", "log", &id, "--config"])
        .arg(&ctx.config)
        .arg("--state-dir")
        .arg(&ctx.state)
        .args(["--agent", "stranger", "--tenant", "acme"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no session"));
}

/// A PostgreSQL of this test's own: `scripts/services up postgres` in a services
/// directory and on a port of its own, so restarting it disturbs no other test. Stopped
/// (by the PID it recorded) when dropped.
struct OwnPostgres {
    dir: tempfile::TempDir,
    port: u16,
}

impl OwnPostgres {
    fn start() -> OwnPostgres {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let pg = OwnPostgres {
            dir: tempfile::tempdir().unwrap(),
            port,
        };
        pg.up();
        pg
    }

    /// `scripts/services up postgres` (idempotent); the `[store] url` it prints.
    fn up(&self) -> String {
        let out = std::process::Command::new(common::repo().join("scripts/services"))
            .args(["up", "postgres"])
            .env("SKILLGATE_SERVICES_DIR", self.dir.path())
            .env("SKILLGATE_PG_PORT", self.port.to_string())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "scripts/services up postgres: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(self.dir.path().join("postgres/log")).unwrap_or_default()
        );
        stdout
            .lines()
            .find_map(|l| l.strip_prefix("url = \"")?.strip_suffix('"'))
            .unwrap_or_else(|| panic!("no url in: {stdout}"))
            .to_string()
    }

    /// The postmaster's PID, as `up` recorded it.
    fn pid(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("postgres/pid"))
            .unwrap()
            .trim()
            .to_string()
    }

    /// Sends `signal` to the postmaster and waits until it is gone.
    fn stop(&self, signal: &str) {
        let pid = self.pid();
        let sent = std::process::Command::new("kill")
            .args([signal, &pid])
            .status()
            .unwrap();
        assert!(sent.success(), "kill {signal} {pid}");
        let deadline = Instant::now() + Duration::from_secs(60);
        while is_alive(&pid) {
            assert!(Instant::now() < deadline, "PostgreSQL ({pid}) did not stop");
            std::thread::sleep(Duration::from_millis(50));
        }
        // As `scripts/services down` does: a zombie not reaped yet still answers
        // `kill -0`, which `up` would take for a server that runs but does not answer.
        std::fs::remove_file(self.dir.path().join("postgres/pid")).unwrap();
    }

    /// An immediate shutdown (every backend ended at once, crash recovery at the next
    /// start), then a start on the same data.
    fn restart(&self) {
        self.stop("-QUIT");
        self.up();
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let pid = self.dir.path().join("postgres/pid");
        if std::fs::read_to_string(&pid).is_ok_and(|p| is_alive(p.trim())) {
            self.stop("-INT");
        }
    }
}

/// Whether process `pid` runs (a zombie does not).
fn is_alive(pid: &str) -> bool {
    std::fs::read_to_string(Path::new("/proc").join(pid).join("stat")).is_ok_and(|s| {
        s.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

#[test]
fn postgres_restart_mid_session_fails_the_step_in_flight_cleanly_and_the_next_one_runs() {
    let pg = OwnPostgres::start();
    let ctx = Ctx::new(Some(&pg.up()));
    let id = ctx.ok(&["new"]).trim().to_string();
    let csv = ctx.script("data.csv", "n\n1\n2\n3\n");
    ctx.ok(&["upload", &id, &csv, "data.csv"]);
    let sum = ctx.script(
        "sum.py",
        "total = sum(int(l) for l in open('data.csv').read().split()[1:])\nopen('total.txt','w').write(str(total))\nprint(total)\n",
    );
    assert_eq!(ctx.exec(&id, &sum)["seq"], 2);

    // A step that changes the workspace, then waits for a file the test puts into its
    // workspace once the database has restarted.
    let hold = ctx.script(
        "hold.py",
        "import os, time\nopen('total.txt','w').write('half-written')\nwhile not os.path.exists('go'):\n    time.sleep(0.05)\nprint('done')\n",
    );
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("skillgate"))
        .arg("session")
        .args(["exec", &id, "--code", &hold, "--lang", "python"])
        .args(["--timeout", "120s"])
        .args(ctx.args())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The step runs once its workspace (on the host) holds what it wrote.
    let ws = ctx.slot(&id).join("ws");
    let running = || {
        Some(ws.clone())
            .filter(|w| std::fs::read(w.join("total.txt")).is_ok_and(|t| t == b"half-written"))
    };
    let deadline = Instant::now() + Duration::from_secs(120);
    let workspace = loop {
        if let Some(w) = running() {
            break w;
        }
        assert!(Instant::now() < deadline, "the step never started");
        std::thread::sleep(Duration::from_millis(50));
    };
    pg.restart();
    std::fs::write(workspace.join("go"), "").unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "a clear error: {stderr}");
    assert!(
        stderr.contains("lost its lock") && stderr.contains("nothing was recorded"),
        "{stderr}"
    );

    // Nothing of it in the log; the next step runs on the recorded state and the log
    // goes on unbroken (its key chain replays from nothing without a divergence).
    assert_eq!(ctx.log(&id).len(), 2);
    let read = ctx.script("read.py", "print(open('total.txt').read())\n");
    let r = ctx.exec(&id, &read);
    assert_eq!(r["report"]["stdout"].as_str().unwrap().trim(), "6", "{r}");
    assert_eq!(r["seq"], 3);
    let seqs: Vec<u64> = ctx
        .log(&id)
        .iter()
        .map(|e| e["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, [1, 2, 3]);
    let replay: serde_json::Value =
        serde_json::from_str(&ctx.ok(&["replay", &id, "--cold", "--format", "json"])).unwrap();
    assert_eq!(replay["restored"]["replayed"], 3, "{replay}");
    assert!(replay["restored"]["divergence"].is_null(), "{replay}");
}

#[test]
fn a_step_sees_allow_listed_variables_it_asks_for_and_nothing_else() {
    let ctx = Ctx::new(None);
    let id = ctx.ok(&["new"]).trim().to_string();
    let show = ctx.script(
        "env.py",
        "import json, os\nnames = ['TZ', 'LC_ALL', 'SKILLGATE_DEMO_SECRET']\nprint(json.dumps({n: os.environ.get(n) for n in names}))\n",
    );
    // In the caller's own environment: none of it reaches a step.
    let run = |extra: &[&str]| {
        ctx.cmd(
            &[
                &["exec", &id, "--code", &show, "--lang", "python"][..],
                extra,
                &["--format", "json"],
            ]
            .concat(),
        )
        .env("TZ", "Europe/Paris")
        .env("SKILLGATE_DEMO_SECRET", "from-the-caller")
        .output()
        .unwrap()
    };
    let out = run(&["--env", "TZ=Asia/Tokyo", "--env", "LC_ALL=C.UTF-8"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let seen: serde_json::Value =
        serde_json::from_str(r["report"]["stdout"].as_str().unwrap()).unwrap();
    assert_eq!(seen["TZ"], "Asia/Tokyo", "{seen}");
    assert_eq!(seen["LC_ALL"], "C.UTF-8", "{seen}");
    assert!(seen["SKILLGATE_DEMO_SECRET"].is_null(), "{seen}");
    // Recorded with the step.
    let log = ctx.log(&id);
    assert_eq!(log[0]["kind"]["env"]["TZ"], "Asia/Tokyo", "{log:?}");

    // A name off the allow-list is refused by name; nothing runs, nothing is recorded.
    for var in [
        "SKILLGATE_DEMO_SECRET=x",
        "LD_PRELOAD=/tmp/x.so",
        "PYTHONSTARTUP=/workspace/x.py",
    ] {
        let out = run(&["--env", var]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let name = var.split('=').next().unwrap();
        assert_eq!(out.status.code(), Some(2), "{var}: {stderr}");
        assert!(
            stderr.contains(&format!("`{name}` is not on the step allow-list")),
            "{stderr}"
        );
    }
    assert_eq!(ctx.log(&id).len(), 1);

    // A replay sets the recorded variables again: no divergence.
    let replay: serde_json::Value =
        serde_json::from_str(&ctx.ok(&["replay", &id, "--cold", "--format", "json"])).unwrap();
    assert!(replay["restored"]["divergence"].is_null(), "{replay}");
}

/// The example config with `[sessions] env_allow` set to `list` (TOML).
fn with_env_allow(list: &str) -> Ctx {
    Ctx::with_config(|text| {
        let start = text
            .find("env_allow = [")
            .expect("the example sets env_allow");
        let end = start + text[start..].find(']').unwrap() + 1;
        format!("{}env_allow = {list}{}", &text[..start], &text[end..])
    })
}

#[test]
fn the_configured_allow_list_lets_a_step_see_an_extra_variable_and_refuses_the_rest() {
    let ctx = with_env_allow(r#"["TZ", "REPORT_TITLE"]"#);
    let id = ctx.ok(&["new"]).trim().to_string();
    let show = ctx.script(
        "env.py",
        "import json, os\nprint(json.dumps({n: os.environ.get(n) for n in ['REPORT_TITLE', 'TZ']}))\n",
    );
    let exec = |var: &str| {
        ctx.cmd(&[
            "exec", &id, "--code", &show, "--lang", "python", "--env", var, "--format", "json",
        ])
        .output()
        .unwrap()
    };
    let out = exec("REPORT_TITLE=Q3 sales");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let seen: serde_json::Value =
        serde_json::from_str(r["report"]["stdout"].as_str().unwrap()).unwrap();
    assert_eq!(seen["REPORT_TITLE"], "Q3 sales", "{seen}");
    // The list replaces the default one: LC_ALL is no longer on it.
    let out = exec("LC_ALL=C");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("`LC_ALL` is not on the step allow-list (TZ, REPORT_TITLE)"),
        "{stderr}"
    );
    assert_eq!(ctx.log(&id).len(), 1);
}

#[test]
fn a_bad_env_allow_entry_is_a_config_error_naming_the_key() {
    for (list, name) in [
        (r#"["TZ", ""]"#, "``"),
        (r#"["A=B"]"#, "`A=B`"),
        (r#"["PATH"]"#, "`PATH`"),
        (r#"["LD_PRELOAD"]"#, "`LD_PRELOAD`"),
        (r#"["PYTHONSTARTUP"]"#, "`PYTHONSTARTUP`"),
    ] {
        let ctx = with_env_allow(list);
        let out = ctx.cmd(&["new"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{list}: {stderr}");
        assert!(
            stderr.contains("invalid config: `[sessions] env_allow`") && stderr.contains(name),
            "{list}: {stderr}"
        );
    }
    // An unknown key of [sessions] is refused, naming it.
    let ctx = Ctx::with_config(|text| text.replace("env_allow = [", "env_alow = ["));
    let out = ctx.cmd(&["new"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("env_alow"), "{stderr}");
}

// Issue 17: shell steps (`exec --sh`).

#[test]
fn a_shell_step_is_denied_without_a_run_command_grant() {
    let ctx = Ctx::new(None);
    let id = ctx.ok(&["new"]).trim().to_string();
    let csv = ctx.script("data.csv", "b,2\na,1\n");
    ctx.ok(&["upload", &id, &csv, "data.csv"]);
    let (ok, r) = ctx.exec_sh(&id, "sort data.csv | head -n 3 > top.csv");
    assert!(!ok, "{r}");
    assert_eq!(r["report"]["status"], "denied", "{r}");
    let finding = &r["report"]["findings"][0];
    assert_eq!(finding["rule_id"], "default-deny", "{r}");
    assert!(
        finding["message"].as_str().unwrap().contains("run_command"),
        "{r}"
    );
    assert!(r["seq"].is_null(), "{r}");
    assert_eq!(ctx.log(&id).len(), 1, "only the upload is recorded");
}

#[test]
fn a_granted_shell_step_runs_in_the_workspace_and_a_python_step_reads_its_file() {
    let ctx = Ctx::with_shell_grant();
    let id = ctx.ok(&["new"]).trim().to_string();
    let csv = ctx.script("data.csv", "d,4\nb,2\ne,5\na,1\nc,3\n");
    ctx.ok(&["upload", &id, &csv, "data.csv"]);
    let (ok, r) = ctx.exec_sh(
        &id,
        "sort data.csv | head -n 3 > top.csv && wc -l < top.csv",
    );
    assert!(ok, "{r}");
    assert_eq!(r["report"]["status"], "ok", "{r}");
    assert_eq!(r["report"]["stdout"].as_str().unwrap().trim(), "3", "{r}");
    assert_eq!(r["seq"], 2, "{r}");

    let read = ctx.script(
        "read.py",
        "print(open('top.csv').read().replace('\\n', ';'))\n",
    );
    let r = ctx.exec(&id, &read);
    assert_eq!(r["report"]["status"], "ok", "{r}");
    assert_eq!(
        r["report"]["stdout"].as_str().unwrap().trim(),
        "a,1;b,2;c,3;",
        "{r}"
    );

    // Recorded as a shell step, so a cold replay runs it again, identically.
    let log = ctx.log(&id);
    let step = &log[1]["kind"];
    assert_eq!(step["kind"], "step", "{log:?}");
    assert_eq!(step["language"], "shell", "{log:?}");
    assert_eq!(
        step["code"],
        "sort data.csv | head -n 3 > top.csv && wc -l < top.csv"
    );
    let replay: serde_json::Value =
        serde_json::from_str(&ctx.ok(&["replay", &id, "--cold", "--format", "json"])).unwrap();
    assert_eq!(replay["restored"]["replayed"], 3, "{replay}");
    assert!(replay["restored"]["divergence"].is_null(), "{replay}");
    assert_eq!(ctx.ok(&["download", &id, "top.csv"]), "a,1\nb,2\nc,3\n");
}

#[test]
fn the_shell_pre_scan_blocks_a_step_before_it_runs() {
    let ctx = Ctx::with_shell_grant();
    let id = ctx.ok(&["new"]).trim().to_string();
    let csv = ctx.script("data.csv", "a,1\n");
    ctx.ok(&["upload", &id, &csv, "data.csv"]);
    for (cmd, rule) in [
        (
            "curl -s http://127.0.0.1:9/ > data.csv",
            "sh.command.network",
        ),
        ("$(echo rm) data.csv", "sh.command.dynamic"),
        ("eval 'rm data.csv'", "sh.command.eval"),
        (
            "cat </dev/tcp/127.0.0.1/1 > data.csv",
            "sh.redirect.network",
        ),
    ] {
        let (ok, r) = ctx.exec_sh(&id, cmd);
        assert!(!ok, "{cmd}: {r}");
        assert_eq!(r["report"]["status"], "blocked", "{cmd}: {r}");
        let rules: Vec<&str> = r["report"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["rule_id"].as_str())
            .collect();
        assert!(rules.contains(&rule), "{cmd}: wanted {rule}, got {rules:?}");
        assert!(r["seq"].is_null(), "{cmd}: {r}");
    }
    assert_eq!(ctx.log(&id).len(), 1, "nothing but the upload is recorded");
    assert_eq!(ctx.ok(&["download", &id, "data.csv"]), "a,1\n");
}

#[test]
fn exec_takes_a_script_or_a_shell_command_line_not_both() {
    let ctx = Ctx::new(None);
    let script = ctx.script("x.py", "print(1)\n");
    let script = script.as_str();
    for args in [
        vec![
            "exec", "0", "--sh", "ls", "--code", script, "--lang", "python",
        ],
        vec!["exec", "0", "--sh", "ls", "--runtime", "python-data"],
        vec!["exec", "0"],
        vec!["exec", "0", "--code", script],
    ] {
        let out = ctx.cmd(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}
