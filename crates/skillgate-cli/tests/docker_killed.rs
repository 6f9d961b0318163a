//! `skillgate run` on the docker executor killed by SIGKILL mid-run leaves its container
//! running, and on the host the run's folder with its `/out` tmpfs: nothing of the
//! process runs after SIGKILL. The next `skillgate run` on a docker executor of this host
//! removes them before its own run (the containers carry their owner's boot id, pid and
//! start time).
mod common;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(60), "{what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The ids of the engine's containers whose run folder is `dir`.
fn containers_of(socket: &str, dir: &Path) -> Vec<String> {
    let out = Command::new("docker")
        .args(["-H", &format!("unix://{socket}"), "ps", "-aq", "--filter"])
        .arg(format!("label=io.skillgate.dir={}", dir.display()))
        .output()
        .expect("the docker CLI (docker.io, which scripts/services installs)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

fn run_folders(tmp: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("skillgate-run-"))
        })
        .collect()
}

fn mounted(path: &Path) -> bool {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .any(|l| l.split(' ').nth(4) == Some(&*path.to_string_lossy()))
}

fn skillgate_run(config: &Path, tmp: &Path, code: &Path) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("skillgate"));
    cmd.args([
        "run",
        "--lang",
        "python",
        "--format",
        "json",
        "--disable",
        "policy",
    ])
    .arg("--code")
    .arg(code)
    .arg("--config")
    .arg(config)
    .arg("--state-dir")
    .arg(common::state_dir())
    .env("TMPDIR", tmp);
    cmd
}

#[test]
fn the_next_run_removes_what_a_killed_run_left() {
    let native = common::config_with_runtimes("docker-killed");
    common::install_runtime(&native, "python");
    let (_docker, section) = common::Service::up("docker");
    let socket = section
        .lines()
        .find_map(|l| l.strip_prefix("socket = \""))
        .and_then(|l| l.strip_suffix('"'))
        .expect("the section names the engine's socket")
        .to_owned();
    let config = common::with_executor(&native, "docker-killed", &section);
    // Python skills that name no runtime run on `python` (its image is loaded below).
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replacen("[runtimes]\n", "[runtimes]\npython = \"python\"\n", 1),
    )
    .unwrap();
    common::succeeds(
        assert_cmd::Command::cargo_bin("skillgate")
            .unwrap()
            .args(["runtime", "load", "python", "--config"])
            .arg(&config),
    );

    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let looping = dir.path().join("loop.py");
    std::fs::write(&looping, "import time\nwhile True:\n    time.sleep(0.2)\n").unwrap();
    let mut child = skillgate_run(&config, &tmp, &looping)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut folder = None;
    wait_for("the run's container never appeared", || {
        folder = run_folders(&tmp).into_iter().next();
        folder
            .as_ref()
            .is_some_and(|f| !containers_of(&socket, f).is_empty())
    });
    let folder = folder.unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    // Nothing of the killed process removed them.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(containers_of(&socket, &folder).len(), 1);
    assert!(folder.exists() && mounted(&folder.join("out")));

    let quick = dir.path().join("quick.py");
    std::fs::write(&quick, "import json\nprint(json.dumps({'ok': True}))\n").unwrap();
    let out = skillgate_run(&config, &tmp, &quick).output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(report["status"], "ok", "{report}");
    assert!(
        containers_of(&socket, &folder).is_empty(),
        "the killed run's container stayed"
    );
    assert!(
        !mounted(&folder.join("out")),
        "the killed run's /out stayed mounted"
    );
    assert!(!folder.exists(), "the killed run's folder stayed");
    assert!(run_folders(&tmp).is_empty(), "{:?}", run_folders(&tmp));
}
