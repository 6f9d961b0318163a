//! When the host process ends or stops: a sandbox never outlives `skillgate run` (killed
//! with SIGKILL, nothing of the run is left: processes, mounts, cgroups), keeps its wall
//! clock while the host is stopped, and SIGTERM cancels the run with a report.
mod common;
use common::state_dir;
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Generous: these wait for something that happens at once, or never on a broken build.
const PATIENCE: Duration = Duration::from_secs(45);

/// Starts `skillgate run` on a Python skill that sleeps in a loop.
fn start(extra: &[&str]) -> (Child, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sleeper.py");
    std::fs::write(&file, "import time\nwhile True:\n    time.sleep(0.1)\n").unwrap();
    let child = Command::new(assert_cmd::cargo::cargo_bin("skillgate"))
        .args(["run", "--lang", "python", "--format", "json"])
        // Limits apply as given: nothing clamps the long wall clock these tests need.
        .args([
            "--disable",
            "prescan",
            "--disable",
            "policy",
            "--disable",
            "isolation",
        ])
        .arg("--state-dir")
        .arg(state_dir())
        .arg("--code")
        .arg(&file)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    (child, dir)
}

fn children(pid: u32) -> Vec<u32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .flatten()
                .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
                .flat_map(|c| {
                    c.split_whitespace()
                        .filter_map(|p| p.parse().ok())
                        .collect::<Vec<_>>()
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `pid` is a process that has not ended (a zombie waiting for its parent to
/// reap it has ended).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let state = s.get(s.rfind(')')? + 2..)?.chars().next()?;
            Some(state != 'Z' && state != 'X')
        })
        .unwrap_or(false)
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < PATIENCE, "waited too long for: {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The sandbox's init (the host's child named `sandbox-init`; the host may have other
/// children, such as an interpreter shim it asks for its prefix) and the skill (the
/// init's child), once it runs.
fn sandbox_of(host: u32) -> (u32, u32) {
    let mut found = None;
    wait_until("the skill to start", || {
        found = children(host)
            .into_iter()
            .filter(|c| {
                std::fs::read_to_string(format!("/proc/{c}/comm"))
                    .is_ok_and(|n| n.trim() == "sandbox-init")
            })
            .find_map(|init| Some((init, *children(init).first()?)));
        found.is_some()
    });
    found.unwrap()
}

fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap();
    assert!(ok.success(), "kill {sig} {pid}");
}

/// The run cgroups `pid` is in, as directories under /sys/fs/cgroup.
fn run_cgroups(pid: u32) -> Vec<PathBuf> {
    std::fs::read_to_string(format!("/proc/{pid}/cgroup"))
        .unwrap()
        .lines()
        .filter(|l| l.contains("/skillgate/run-"))
        .map(|l| {
            let mut parts = l.splitn(3, ':');
            let (_, ctls, path) = (parts.next(), parts.next().unwrap(), parts.next().unwrap());
            let mount = PathBuf::from("/sys/fs/cgroup");
            let mount = if ctls.is_empty() {
                mount
            } else {
                mount.join(ctls)
            };
            mount.join(path.trim_start_matches('/'))
        })
        .collect()
}

fn mount_ns(pid: u32) -> PathBuf {
    std::fs::read_link(format!("/proc/{pid}/ns/mnt")).unwrap()
}

#[test]
fn a_host_killed_with_sigkill_leaves_nothing_of_its_run() {
    let (mut host, _dir) = start(&["--timeout", "10m"]);
    let (init, skill) = sandbox_of(host.id());
    let cgroups = [run_cgroups(init), run_cgroups(skill)].concat();
    assert!(!cgroups.is_empty(), "the sandbox is in no run cgroup");
    let namespaces = [mount_ns(init), mount_ns(skill)];
    // The init does not show the host's command line.
    let cmdline = std::fs::read(format!("/proc/{init}/cmdline")).unwrap();
    assert!(
        !String::from_utf8_lossy(&cmdline).contains("sleeper.py"),
        "{cmdline:?}"
    );

    host.kill().unwrap();
    host.wait().unwrap();
    // The skill's wall clock is 10 minutes: only the host's death can end it now.
    wait_until("the sandbox's processes to end", || {
        !alive(init) && !alive(skill)
    });
    // No process is left in the sandbox's mount namespaces (so its mounts are gone).
    let holders: Vec<_> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read_link(e.path().join("ns/mnt")).is_ok_and(|ns| namespaces.contains(&ns))
        })
        .map(|e| e.file_name())
        .collect();
    assert!(
        holders.is_empty(),
        "still in the sandbox's mounts: {holders:?}"
    );
    // The next run removes the cgroups the killed host could not.
    let (next, _dir) = start(&["--timeout", "10m"]);
    let (next_init, _) = sandbox_of(next.id());
    let mut next = next;
    next.kill().unwrap();
    next.wait().unwrap();
    wait_until("the next run's sandbox to end", || !alive(next_init));
    for cg in &cgroups {
        assert!(!cg.exists(), "{} was left behind", cg.display());
    }
}

#[test]
fn a_stopped_host_does_not_stop_the_wall_clock() {
    let (host, _dir) = start(&["--timeout", "2s"]);
    let (_, skill) = sandbox_of(host.id());
    signal(host.id(), "-STOP");
    // The skill loops forever: only the init's own deadline can end it while the host
    // is stopped.
    wait_until("the skill to be killed at its deadline", || !alive(skill));
    signal(host.id(), "-CONT");
    let out = host.wait_with_output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no report ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(report["status"], "timeout", "{report:#}");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn sigterm_cancels_the_run_and_still_reports_it() {
    let (host, _dir) = start(&["--timeout", "10m"]);
    let (init, skill) = sandbox_of(host.id());
    signal(host.id(), "-TERM");
    let out = host.wait_with_output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no report ({e}; {:?}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(report["status"], "error", "{report:#}");
    let rules: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["rule_id"].as_str())
        .collect();
    assert!(rules.contains(&"sandbox.cancelled"), "{rules:?}");
    assert_eq!(out.status.code(), Some(1));
    wait_until("the sandbox to end", || !alive(init) && !alive(skill));
}
