//! `skillgate run` on the OCI executor stopped by two SIGTERMs (the second gives up
//! waiting and the process exits at once), or killed by SIGKILL: the container it dropped
//! is still deleted, and nothing of the run is left on the host.
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn containers(runc_root: &std::path::Path) -> Vec<String> {
    let out = Command::new("runc")
        .arg("--root")
        .arg(runc_root)
        .args(["list", "-q"])
        .output()
        .expect("runc is not installed (apt-get install runc)");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(20), "{what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A `skillgate run` of a skill that never ends, on runc, with its temporary files in a
/// folder of the test; returns the process, the test's folder and runc's state root.
fn start() -> (std::process::Child, tempfile::TempDir, std::path::PathBuf) {
    let (child, dir, runc_root) = spawn("import time\nwhile True: time.sleep(1)\n");
    wait_for("the run's container never appeared", || {
        !containers(&runc_root).is_empty()
    });
    (child, dir, runc_root)
}

/// `skillgate run` of `code` on runc, with its temporary files in a folder of the test.
fn spawn(code: &str) -> (std::process::Child, tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("oci");
    let config = dir.path().join("skillgate.toml");
    std::fs::write(
        &config,
        format!(
            "[executor]\nkind = \"oci\"\nruntime = \"runc\"\nstate_root = \"{}\"\n",
            state.display()
        ),
    )
    .unwrap();
    let skill = dir.path().join("s.py");
    std::fs::write(&skill, code).unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let child = Command::new(assert_cmd::cargo::cargo_bin("skillgate"))
        .args(["run", "--code"])
        .arg(&skill)
        .args(["--lang", "python", "--disable", "policy", "--config"])
        .arg(&config)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .env("TMPDIR", &tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    (child, dir, state.join("runc"))
}

/// Waits until runc has no container, their cgroups are gone, and the run's folder and
/// its `/out` mount are gone from the test's temporary folder.
fn nothing_left(dir: &std::path::Path, runc_root: &std::path::Path, ours: Vec<String>) {
    wait_for("the dropped container was not deleted", || {
        containers(runc_root).is_empty()
    });
    for id in ours {
        let cgroup = std::path::Path::new("/sys/fs/cgroup/memory/skillgate").join(&id);
        wait_for("the container's cgroup stayed", || !cgroup.exists());
    }
    let tmp = dir.join("tmp");
    wait_for("the run's folder stayed", || {
        std::fs::read_dir(&tmp).unwrap().next().is_none()
    });
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(
        !mounts.contains(&*tmp.to_string_lossy()),
        "the run's /out tmpfs is still mounted"
    );
}

#[test]
fn a_run_given_up_by_a_second_signal_leaves_no_container() {
    let (mut child, dir, runc_root) = start();
    let ours = containers(&runc_root);
    for _ in 0..2 {
        let pid = child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        std::thread::sleep(Duration::from_millis(200));
    }
    let status = child.wait().unwrap();
    assert!(!status.success(), "{status}");
    nothing_left(dir.path(), &runc_root, ours);
}

/// Nothing in the process runs after SIGKILL: the run's watcher process removes it.
#[test]
fn a_run_whose_process_is_killed_leaves_no_container() {
    let (mut child, dir, runc_root) = start();
    let ours = containers(&runc_root);
    child.kill().unwrap();
    child.wait().unwrap();
    nothing_left(dir.path(), &runc_root, ours);
}

/// A run that ends: its watcher removes everything once the outcome is out.
#[test]
fn a_finished_run_leaves_nothing() {
    let (child, dir, runc_root) = spawn("print('{}')\n");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    nothing_left(dir.path(), &runc_root, Vec::new());
}
