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
        let dir = tempfile::tempdir().unwrap();
        let config = example_config(dir.path(), |text| match url {
            Some(url) => text.replace("[store]\n", &format!("[store]\nurl = {url:?}\n")),
            None => text,
        });
        Ctx {
            config,
            state: dir.path().join("state"),
            _dir: dir,
        }
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
    let pid = child.id();
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let log = ctx.log(&id);
    assert_eq!(log.len(), 2, "no event of the killed step: {log:?}");

    // Its workspace outlived it; `gc` reclaims the workspaces of dead processes.
    let prefix = format!("skillgate-session-{pid}-");
    let left = || {
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().starts_with(&prefix))
    };
    assert!(left(), "the killed process left its workspace behind");
    ctx.ok(&["gc"]);
    assert!(!left(), "gc reclaimed it");

    // The lock died with the process; the state is the recorded one.
    let read = ctx.script("read.py", "print(open('total.txt').read())\n");
    let r = ctx.exec(&id, &read);
    assert_eq!(r["report"]["stdout"].as_str().unwrap().trim(), "6", "{r}");
    assert_eq!(r["seq"], 3);
    let out = ctx.ok(&["download", &id, "total.txt"]);
    assert_eq!(out, "6");
    let replay: serde_json::Value =
        serde_json::from_str(&ctx.ok(&["replay", &id, "--cold", "--format", "json"])).unwrap();
    assert_eq!(replay["restored"]["replayed"], 3, "{replay}");
    assert!(replay["restored"]["divergence"].is_null(), "{replay}");
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
