//! The presets applied for real: the compiled BPF is installed in a child (by the
//! `confine-exec` helper) which then executes a static probe, real Python and Node skills
//! and pandas/numpy/matplotlib workloads, and a shell step's workload.
mod common;

use common::{confined, probe, probe_results, repo};
use skillgate_confine::profile::{AF_INET, AF_INET6, AF_UNIX, evaluate, permit_inet};
use skillgate_confine::{Arch, bpf, preset, preset_names};
use skillgate_core::SeccompAction;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;

/// The probe's calls: (probe name, system call, first argument as the probe passes it).
const CALLS: &[(&str, &str, u64)] = &[
    ("getpid", "getpid", 0),
    ("ptrace", "ptrace", u64::MAX),
    ("process_vm_readv", "process_vm_readv", 0),
    ("process_vm_writev", "process_vm_writev", 0),
    ("mount", "mount", 0),
    ("umount2", "umount2", 0),
    ("pivot_root", "pivot_root", 0),
    ("chroot", "chroot", 0),
    ("unshare", "unshare", 0),
    ("setns", "setns", u64::MAX),
    ("bpf", "bpf", u64::MAX),
    ("perf_event_open", "perf_event_open", 0),
    ("keyctl", "keyctl", u64::MAX),
    ("add_key", "add_key", 0),
    ("request_key", "request_key", 0),
    ("userfaultfd", "userfaultfd", u64::MAX),
    ("io_uring_setup", "io_uring_setup", 0),
    ("io_uring_enter", "io_uring_enter", u64::MAX),
    ("io_uring_register", "io_uring_register", u64::MAX),
    ("kexec_load", "kexec_load", 0),
    ("kexec_file_load", "kexec_file_load", u64::MAX),
    ("init_module", "init_module", 0),
    ("finit_module", "finit_module", u64::MAX),
    ("delete_module", "delete_module", 0),
    ("reboot", "reboot", 0),
    ("swapon", "swapon", 0),
    ("swapoff", "swapoff", 0),
    ("acct", "acct", 0),
    ("open_by_handle_at", "open_by_handle_at", u64::MAX),
    ("personality", "personality", 0xffff_ffff),
    ("clone3", "clone3", 0),
    ("clone_fork", "clone", 17),                  // SIGCHLD
    ("clone_newuser", "clone", 0x1000_0000 | 17), // CLONE_NEWUSER
    ("clone_newnet", "clone", 0x4000_0000 | 17),  // CLONE_NEWNET
    ("clone_newns", "clone", 0x0002_0000 | 17),   // CLONE_NEWNS
    ("socket_unix", "socket", AF_UNIX),
    ("socket_inet", "socket", AF_INET),
    ("socket_inet6", "socket", AF_INET6),
    ("socket_netlink", "socket", 16),
    ("socket_packet", "socket", 17),
];

fn arg_vector(arg0: u64) -> [u64; 6] {
    // Sign-extended -1 from C is all ones; the kernel sees 64 bits.
    [arg0, 0, 0, 0, 0, 0]
}

/// Runs every probe call under `flags` and checks each against the profile's reference
/// semantics: an allowed call must not fail with the filter's errno, a refused call must
/// fail with exactly it.
fn check_against_reference(name: &str, profile: &skillgate_core::SeccompProfile, flags: &[&str]) {
    let names: Vec<&str> = CALLS.iter().map(|c| c.0).collect();
    let out = confined(flags, probe(), &names, None, None);
    assert!(out.status.success(), "{name}: probe failed: {out:?}");
    let results = probe_results(&out);
    assert_eq!(results.len(), CALLS.len(), "{name}: {results:?}");
    for ((probe_name, call, arg0), (seen_name, seen)) in CALLS.iter().zip(&results) {
        assert_eq!(probe_name, seen_name);
        match evaluate(profile, call, &arg_vector(*arg0)) {
            SeccompAction::Errno(e) => assert_eq!(
                seen,
                &format!("errno={e}"),
                "{name}: {probe_name} must fail with errno {e}"
            ),
            SeccompAction::Allow | SeccompAction::Log => assert_ne!(
                seen, "errno=1",
                "{name}: {probe_name} is allowed but failed with EPERM"
            ),
            SeccompAction::KillProcess => unreachable!("the probe runs errno profiles"),
        }
    }
}

#[test]
fn every_preset_denies_what_it_must_and_allows_what_it_should_natively() {
    for name in preset_names() {
        let profile = preset(name).unwrap();
        check_against_reference(name, &profile, &["--preset", name]);
        // And in plain words, for the calls the issue names:
        let out = confined(
            &["--preset", name],
            probe(),
            &[
                "getpid",
                "thread",
                "clone_fork",
                "socket_unix",
                "ptrace",
                "unshare",
                "clone_newuser",
                "socket_inet",
                "clone3",
                "io_uring_setup",
            ],
            None,
            None,
        );
        let r = probe_results(&out);
        let get = |k: &str| {
            r.iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
                .unwrap()
        };
        assert!(get("getpid").starts_with("ret="), "{name}: {r:?}");
        assert_eq!(
            get("thread"),
            "ret=0",
            "{name}: threads work through the clone3 fallback"
        );
        assert!(get("clone_fork").starts_with("ret="), "{name}: {r:?}");
        assert!(get("socket_unix").starts_with("ret="), "{name}: {r:?}");
        for denied in [
            "ptrace",
            "unshare",
            "clone_newuser",
            "socket_inet",
            "io_uring_setup",
        ] {
            assert_eq!(get(denied), "errno=1", "{name}: {denied}");
        }
        assert_eq!(get("clone3"), "errno=38", "{name}: clone3 gets ENOSYS");
    }
}

#[test]
fn inet_sockets_open_only_when_the_network_policy_allows_them() {
    let mut profile = preset("python").unwrap();
    permit_inet(&mut profile);
    check_against_reference("python+inet", &profile, &["--preset", "python", "--inet"]);
    let out = confined(
        &["--preset", "python", "--inet"],
        probe(),
        &["socket_inet", "socket_inet6", "socket_netlink"],
        None,
        None,
    );
    let r = probe_results(&out);
    assert!(
        r[0].1.starts_with("ret=") && r[1].1.starts_with("ret="),
        "{r:?}"
    );
    assert_eq!(r[2].1, "errno=1", "netlink stays denied: {r:?}");
}

#[test]
fn under_kill_a_denied_call_kills_the_process_with_sigsys() {
    for denied in ["ptrace", "mount", "clone_newuser", "socket_inet", "bpf"] {
        let out = confined(
            &["--preset", "python", "--kill"],
            probe(),
            &["getpid", denied],
            None,
            None,
        );
        assert_eq!(out.status.signal(), Some(31), "{denied}: {out:?}"); // SIGSYS
        let r = probe_results(&out);
        assert_eq!(r.len(), 1, "only getpid answered before the kill: {r:?}");
    }
    // An allowed run is untouched by the kill setting; clone3 keeps its ENOSYS.
    let out = confined(
        &["--preset", "python", "--kill"],
        probe(),
        &["getpid", "thread", "clone3"],
        None,
        None,
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(probe_results(&out)[2].1, "errno=38");
}

fn run_skill(
    preset_name: &str,
    program: &str,
    dir: &Path,
    script: &str,
    input: &Path,
) -> serde_json::Value {
    let out = confined(
        &["--preset", preset_name],
        Path::new(program),
        &[script],
        Some(input),
        Some(dir),
    );
    assert!(
        out.status.success(),
        "{preset_name}: {program} {script} failed under the preset: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{script}: output is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn the_example_skills_run_unharmed_under_their_presets_and_strict() {
    let skills = repo().join("examples/skills");
    let py = skills.join("analyze-rows");
    let js = skills.join("count-items");
    for p in ["python", "strict"] {
        let v = run_skill(
            p,
            "/usr/bin/python3",
            &py,
            "scripts/main.py",
            &py.join("sample-input.json"),
        );
        assert_eq!(v["answer"], "Processed 3 rows for: monthly revenue", "{p}");
    }
    for p in ["node", "strict"] {
        let v = run_skill(
            p,
            "/usr/bin/node",
            &js,
            "scripts/main.js",
            &js.join("sample-input.json"),
        );
        assert_eq!(v["answer"], "Processed 4 items", "{p}");
    }
}

#[test]
fn pandas_numpy_and_matplotlib_run_unharmed_under_the_python_preset() {
    let check = std::process::Command::new("/usr/bin/python3")
        .args(["-c", "import pandas, numpy, matplotlib"])
        .output()
        .expect("/usr/bin/python3 must exist: apt-get install python3");
    assert!(
        check.status.success(),
        "pandas, numpy and matplotlib are needed: apt-get install -y python3-pandas python3-matplotlib ({})",
        String::from_utf8_lossy(&check.stderr)
    );
    let loads = repo().join("corpora/confine/workloads");
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input.json");
    std::fs::write(
        &input,
        r#"{"n": 32, "series": [2, 7, 1, 8], "data": [{"k": 1, "v": 2.0}, {"k": 2, "v": 5.0}]}"#,
    )
    .unwrap();
    let v = run_skill(
        "python",
        "/usr/bin/python3",
        &loads,
        "pandas_stats.py",
        &input,
    );
    assert_eq!(v["rows"], 2);
    let v = run_skill(
        "python",
        "/usr/bin/python3",
        &loads,
        "numpy_linalg.py",
        &input,
    );
    assert!(v["residual"].as_f64().unwrap() < 1e-9);
    // matplotlib writes its PNG where a sandbox points SKILLGATE_OUTPUT_DIR.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_confine-exec"))
        .args([
            "--preset",
            "python",
            "--",
            "/usr/bin/python3",
            "matplotlib_plot.py",
        ])
        .current_dir(&loads)
        .env("SKILLGATE_OUTPUT_DIR", dir.path())
        .env("MPLCONFIGDIR", dir.path())
        .stdin(std::fs::File::open(&input).unwrap())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(dir.path().join("plot.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
}

#[test]
fn a_shell_step_runs_unharmed_under_the_shell_preset() {
    let workload = repo().join("corpora/confine/workloads/shell_pipeline.sh");
    // It writes where it runs, as a step writes its workspace.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.json");
    std::fs::write(&input, "{}").unwrap();
    let v = run_skill(
        "shell",
        "/usr/bin/dash",
        dir.path(),
        workload.to_str().unwrap(),
        &input,
    );
    assert_eq!(v["rows"], 3, "{v}");
    assert_eq!(v["name"], "a.csv", "{v}");
}

#[test]
fn filters_compile_for_both_architectures_within_the_kernel_limit() {
    for name in preset_names() {
        for arch in Arch::ALL {
            let filters = bpf::compile(&preset(name).unwrap(), arch).unwrap();
            for len in bpf::instruction_counts(&filters) {
                assert!(len > 0 && len <= 4096, "{name}/{arch}: {len} instructions");
            }
        }
    }
}
