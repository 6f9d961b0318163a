//! `skillgate run` on the OCI executor stopped by two SIGTERMs (the second gives up
//! waiting and the process exits at once): the container it dropped is still deleted.
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

#[test]
fn a_run_given_up_by_a_second_signal_leaves_no_container() {
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
    std::fs::write(&skill, "import time\nwhile True: time.sleep(1)\n").unwrap();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("skillgate"))
        .args(["run", "--code"])
        .arg(&skill)
        .args(["--lang", "python", "--disable", "policy", "--config"])
        .arg(&config)
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let runc_root = state.join("runc");
    wait_for("the run's container never appeared", || {
        !containers(&runc_root).is_empty()
    });
    let ours = containers(&runc_root);
    for _ in 0..2 {
        let pid = child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        std::thread::sleep(Duration::from_millis(200));
    }
    let status = child.wait().unwrap();
    assert!(!status.success(), "{status}");
    wait_for("the dropped container was not deleted", || {
        containers(&runc_root).is_empty()
    });
    for id in ours {
        let cgroup = std::path::Path::new("/sys/fs/cgroup/memory/skillgate").join(&id);
        wait_for("the container's cgroup stayed", || !cgroup.exists());
    }
}
