//! What a skill can reach of its host: its own session and process group, a `/proc` that
//! shows only its own processes, an init that memory pressure does not kill, and limits
//! that run out before the skill starts reported as that limit.
use skillgate_core::{Caller, ExecOutcome, ExecRequest, Language, Limits, Skill, Status};
use skillgate_sandbox::NativeSandbox;
use std::time::Duration;
use tower::ServiceExt;

fn run_with(code: &str, limits: Limits) -> ExecOutcome {
    let skill = Skill::builder("t", Language::Python, code.as_bytes().to_vec()).build();
    let mut req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
    req.spec.limits = limits;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(NativeSandbox::new().oneshot(req)).unwrap()
}

fn rules(o: &ExecOutcome) -> Vec<&str> {
    o.findings.iter().map(|f| f.rule_id.as_str()).collect()
}

fn enforcement(o: &ExecOutcome) -> &str {
    &o.findings
        .iter()
        .find(|f| f.rule_id == "sandbox.enforcement")
        .expect("an enforcement finding")
        .message
}

#[test]
fn the_skill_has_a_session_of_its_own_and_cannot_signal_the_hosts_group() {
    // Sharing the host's process group, `kill(0, ...)` reached this test process (and every
    // other run it had started): SIGUSR2's default action would end this test binary.
    let o = run_with(
        "import os, signal, sys\nprint(os.getpgrp(), flush=True)\nos.kill(0, signal.SIGUSR2)\nprint('survived')",
        Limits::default(),
    );
    // The skill's group is the init's (pid 1 of the sandbox): the signal reached the
    // skill itself, and nothing outside.
    assert_eq!(o.stdout, b"1\n", "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.signal, Some(libc::SIGUSR2));
    assert!(
        enforcement(&o).contains("own session"),
        "{}",
        enforcement(&o)
    );
}

#[test]
fn proc_shows_the_skills_own_processes_and_nothing_of_the_host() {
    let probe = r#"
import json, os
seen = {}
for p in ["/proc/1/cmdline", "/proc/1/environ", "/proc/cmdline", "/proc/config.gz",
          "/proc/sys/kernel/random/boot_id", "/proc/meminfo", "/proc/self/status"]:
    try:
        seen[p] = open(p, "rb").read().decode(errors="replace")
    except OSError as e:
        seen[p] = type(e).__name__
seen["pids"] = sorted(e for e in os.listdir("/proc") if e.isdigit())
print(json.dumps(seen))
"#;
    let o = run_with(probe, Limits::default());
    assert_eq!(
        o.status,
        Status::Ok,
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let seen: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let host_cmdline = std::fs::read("/proc/self/cmdline").unwrap();
    let host_cmdline = String::from_utf8_lossy(&host_cmdline);
    // Never the host's command line, whatever the kernel allows.
    assert_ne!(seen["/proc/1/cmdline"], host_cmdline.as_ref());
    assert!(
        seen["/proc/self/status"]
            .as_str()
            .is_some_and(|s| s.contains("Uid:")),
        "{seen}"
    );
    if enforcement(&o).contains("subset=pid") {
        for hidden in [
            "/proc/1/cmdline",
            "/proc/1/environ",
            "/proc/cmdline",
            "/proc/config.gz",
            "/proc/sys/kernel/random/boot_id",
            "/proc/meminfo",
        ] {
            assert_eq!(seen[hidden], "FileNotFoundError", "{hidden}: {seen}");
        }
        // Only the skill itself: not its init.
        assert_eq!(seen["pids"], serde_json::json!(["2"]), "{seen}");
    } else {
        assert!(
            enforcement(&o).contains("host-wide /proc files are readable"),
            "{}",
            enforcement(&o)
        );
    }
}

#[test]
fn memory_pressure_kills_the_skills_processes_not_the_init() {
    // 50 children of 6 MB under a 256 MiB limit: the out-of-memory killer used to choose
    // the init, and the run vanished into an error with no report.
    let code = r#"
import os, time
kids = []
for i in range(50):
    pid = os.fork()
    if pid == 0:
        b = bytearray(6 << 20)
        for j in range(0, len(b), 4096):
            b[j] = 1
        time.sleep(2)
        os._exit(0)
    kids.append(pid)
for k in kids:
    os.waitpid(k, 0)
print("parent done")
"#;
    let o = run_with(
        code,
        Limits {
            memory_bytes: 256 << 20,
            ..Limits::default()
        },
    );
    assert_eq!(o.status, Status::ResourceExhausted, "{:?}", rules(&o));
    assert!(rules(&o).contains(&"limit.memory"), "{:?}", rules(&o));
    assert!(!rules(&o).contains(&"sandbox.init_died"), "{:?}", rules(&o));
    // The skill's parent process outlived its children's OOM kills and ended normally.
    assert_eq!(o.stdout, b"parent done\n");
}

#[test]
fn limits_that_run_out_during_setup_are_that_limits_status() {
    let o = run_with(
        "print(1)",
        Limits {
            wall_timeout: Duration::from_nanos(1),
            ..Limits::default()
        },
    );
    assert_eq!(o.status, Status::Timeout, "{:?}", o.findings);
    assert!(rules(&o).contains(&"limit.wall_timeout"), "{:?}", rules(&o));
    assert!(o.stdout.is_empty());
    for memory_bytes in [0, 1 << 20] {
        let o = run_with(
            "print(1)",
            Limits {
                memory_bytes,
                ..Limits::default()
            },
        );
        assert_eq!(o.status, Status::ResourceExhausted, "{memory_bytes}: {o:?}");
        assert!(rules(&o).contains(&"limit.memory"), "{:?}", rules(&o));
    }
}
