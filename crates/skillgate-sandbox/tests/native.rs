//! The native sandbox end to end: each limit takes effect with the right status, the
//! seccomp filter is installed, artifacts are collected safely, and the supervisor's
//! guarantees (timeout, output cap, orphans) hold inside the sandbox.
use skillgate_core::{
    Caller, ExecOutcome, ExecRequest, Language, Limits, SeccompAction, SeccompProfile, Skill,
    Status,
};
use skillgate_sandbox::{NativeSandbox, SeccompFilter};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tower::ServiceExt;

fn run_with(code: &str, limits: Limits, setup: impl FnOnce(&mut ExecRequest)) -> ExecOutcome {
    let skill = Skill::builder("t", Language::Python, code.as_bytes().to_vec()).build();
    let mut req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({"x": 1}));
    req.spec.limits = limits;
    setup(&mut req);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(NativeSandbox::new().oneshot(req)).unwrap()
}

fn run(code: &str) -> ExecOutcome {
    run_with(code, Limits::default(), |_| {})
}

fn rules(o: &ExecOutcome) -> Vec<&str> {
    o.findings.iter().map(|f| f.rule_id.as_str()).collect()
}

#[test]
fn runs_a_skill_with_its_input_as_the_sandbox_user() {
    let o = run(
        "import json,os,sys; d=json.load(sys.stdin); print(json.dumps([d['x'], os.getuid(), os.getgid(), os.getcwd()]))",
    );
    assert_eq!(
        o.status,
        Status::Ok,
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.stdout, b"[1, 1000, 1000, \"/work\"]\n");
    let enforcement = o
        .findings
        .iter()
        .find(|f| f.rule_id == "sandbox.enforcement")
        .expect("the report says which enforcement was active");
    assert!(
        enforcement.message.contains("cgroups: v"),
        "{}",
        enforcement.message
    );
}

#[test]
fn small_and_large_inputs_arrive_whole() {
    // A small input goes into the pipe at once; one larger than the pipe is fed while the
    // skill reads.
    for len in [10, 4096, 3 << 20] {
        let input = serde_json::json!({ "x": "a".repeat(len) });
        let o = run_with(
            "import json,sys; print(len(json.load(sys.stdin)['x']))",
            Limits::default(),
            |req| req.input = input,
        );
        assert_eq!(
            o.status,
            Status::Ok,
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(o.stdout, format!("{len}\n").into_bytes());
    }
}

#[test]
fn non_zero_exit_is_ok_with_the_code() {
    let o = run("import sys; sys.exit(3)");
    assert_eq!((o.status, o.exit_code), (Status::Ok, Some(3)));
}

#[test]
fn memory_limit_oom_is_resource_exhausted() {
    let limits = Limits {
        memory_bytes: 64 * 1024 * 1024,
        ..Limits::default()
    };
    let o = run_with(
        "b = []\nwhile True: b.append(bytearray(8 << 20))",
        limits,
        |_| {},
    );
    assert_eq!(o.status, Status::ResourceExhausted, "{:?}", rules(&o));
    assert!(rules(&o).contains(&"limit.memory"), "{:?}", rules(&o));
}

#[test]
fn pids_limit_stops_a_fork_bomb() {
    let limits = Limits {
        pids: 8,
        ..Limits::default()
    };
    let code = "import os\nfor _ in range(50):\n    try:\n        if os.fork() == 0:\n            import time; time.sleep(30)\n    except OSError:\n        print('refused'); break\n";
    let o = run_with(code, limits, |_| {});
    assert_eq!(o.status, Status::ResourceExhausted, "{:?}", rules(&o));
    assert!(rules(&o).contains(&"limit.pids"), "{:?}", rules(&o));
    assert_eq!(o.stdout, b"refused\n");
}

#[test]
fn wall_clock_kills_the_tree_including_setsid_daemons() {
    let limits = Limits {
        wall_timeout: Duration::from_millis(1500),
        ..Limits::default()
    };
    let code = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(100)\n    os._exit(0)\ntime.sleep(100)\n";
    let t = Instant::now();
    let o = run_with(code, limits, |_| {});
    assert_eq!(o.status, Status::Timeout);
    assert!(
        t.elapsed() < Duration::from_millis(2500),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn an_orphan_holding_stdout_does_not_stall_the_run() {
    let code = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\nprint('parent done')\n";
    let t = Instant::now();
    let o = run(code);
    assert_eq!(
        o.status,
        Status::Ok,
        "{:?} {:?} {}",
        o.stdout,
        o.usage,
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.stdout, b"parent done\n");
    // The orphan sleeps for 60 s: a run that waited for it would take that long.
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
}

#[test]
fn file_size_limit_is_resource_exhausted() {
    let limits = Limits {
        file_size_bytes: 1024 * 1024,
        ..Limits::default()
    };
    // CPython ignores SIGXFSZ at start, and a skill may try to ignore or catch it and
    // carry on after EFBIG: the sandbox keeps the signal's default action, so every write
    // past the limit kills the writer and the run says which limit ended it.
    for code in [
        "open('/tmp/big', 'wb').write(b'x' * (2 << 20))",
        "try:\n    open('/tmp/big', 'wb').write(b'x' * (2 << 20))\nexcept OSError as e:\n    print(e.errno)\n",
        "import signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_IGN)\nopen('/out/big', 'wb').write(b'x' * (2 << 20))",
        "import signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_DFL)\nf = open('/tmp/big', 'wb')\nwhile True: f.write(b'x' * 65536); f.flush()",
    ] {
        let o = run_with(code, limits, |_| {});
        assert_eq!(o.status, Status::ResourceExhausted, "{code}: {o:?}");
        assert_eq!(o.signal, Some(libc::SIGXFSZ), "{code}");
        assert!(rules(&o).contains(&"limit.file_size"), "{:?}", rules(&o));
    }
    // Other signals are still the skill's to handle.
    let o = run(
        "import signal\nsignal.signal(signal.SIGUSR1, lambda *a: print('caught'))\nimport os\nos.kill(os.getpid(), signal.SIGUSR1)",
    );
    assert_eq!(
        (o.status, o.stdout.as_slice()),
        (Status::Ok, &b"caught\n"[..])
    );
}

#[test]
fn cpu_time_limit_is_resource_exhausted() {
    let limits = Limits {
        cpu_time: Some(Duration::from_secs(1)),
        wall_timeout: Duration::from_secs(20),
        ..Limits::default()
    };
    let o = run_with("while True: pass", limits, |_| {});
    assert_eq!(o.status, Status::ResourceExhausted, "{:?}", rules(&o));
    assert!(rules(&o).contains(&"limit.cpu_time"), "{:?}", rules(&o));
}

#[test]
fn reports_what_the_skill_used() {
    // Half a second of CPU and 96 MiB touched, in a child process the skill waits for: the
    // usage covers every process of the sandbox, not only the first.
    let o = run(concat!(
        "import os, time\n",
        "pid = os.fork()\n",
        "if pid == 0:\n",
        "    b = bytearray(96 << 20)\n",
        "    t = time.process_time()\n",
        "    while time.process_time() - t < 0.5: pass\n",
        "    os._exit(0)\n",
        "os.waitpid(pid, 0)\n",
    ));
    assert_eq!(
        o.status,
        Status::Ok,
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let cpu = o.usage.user_cpu + o.usage.system_cpu;
    assert!(cpu >= Duration::from_millis(500), "{:?}", o.usage);
    assert!(o.usage.max_rss_bytes >= 96 << 20, "{:?}", o.usage);
}

#[test]
fn output_cap_truncates_and_is_resource_exhausted() {
    let limits = Limits {
        stdout_cap: 1000,
        ..Limits::default()
    };
    let o = run_with(
        "import sys\nfor _ in range(1000): sys.stdout.write('y' * 1000)",
        limits,
        |_| {},
    );
    assert_eq!(o.status, Status::ResourceExhausted);
    assert!(o.stdout_truncated);
    assert_eq!(o.stdout.len(), 1000);
}

#[test]
fn work_directory_is_size_capped() {
    let limits = Limits {
        workdir_bytes: 2 * 1024 * 1024,
        ..Limits::default()
    };
    let code = "try:\n    open('/work/fill', 'wb').write(b'x' * (4 << 20))\nexcept OSError as e:\n    print(e.errno)\n";
    let o = run_with(code, limits, |_| {});
    assert_eq!(
        o.stdout,
        b"28\n",
        "ENOSPC; stderr {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A filter that fails these system calls with EPERM and allows the rest.
fn filter(denied: Vec<i64>) -> SeccompFilter {
    use seccompiler::{SeccompAction as A, SeccompFilter as F, TargetArch};
    let map = denied.into_iter().map(|nr| (nr, vec![])).collect();
    let f = F::new(
        map,
        A::Allow,
        A::Errno(libc::EPERM as u32),
        TargetArch::x86_64,
    )
    .unwrap();
    SeccompFilter(Arc::new(vec![f.try_into().unwrap()]))
}

/// A filter that kills the process on this system call.
fn kill_filter(nr: i64) -> SeccompFilter {
    use seccompiler::{SeccompAction as A, SeccompFilter as F, TargetArch};
    let f = F::new(
        [(nr, vec![])].into_iter().collect(),
        A::Allow,
        A::KillProcess,
        TargetArch::x86_64,
    )
    .unwrap();
    SeccompFilter(Arc::new(vec![f.try_into().unwrap()]))
}

#[test]
fn seccomp_errno_rule_denies_the_call() {
    let f = filter(vec![libc::SYS_mkdir, libc::SYS_mkdirat]);
    let code = "import os\ntry:\n    os.mkdir('/tmp/d')\n    print('made')\nexcept PermissionError:\n    print('denied')\n";
    let o = run_with(code, Limits::default(), |r| {
        r.extensions.insert(f);
    });
    assert_eq!(
        o.stdout,
        b"denied\n",
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status, Status::Ok);
}

#[test]
fn seccomp_kill_is_a_security_violation() {
    let code = "import ctypes\nctypes.CDLL(None).ptrace(0, 0, 0, 0)\nprint('survived')\n";
    let o = run_with(code, Limits::default(), |r| {
        r.extensions.insert(kill_filter(libc::SYS_ptrace));
    });
    assert_eq!(
        o.status,
        Status::SecurityViolation,
        "{:?}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.signal, Some(libc::SIGSYS));
    assert!(o.stdout.is_empty());
}

#[test]
fn a_profile_without_a_compiled_filter_is_refused() {
    let skill = Skill::builder("t", Language::Python, b"print(1)".to_vec()).build();
    let mut req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
    req.spec.seccomp = Some(SeccompProfile {
        name: "strict".into(),
        default_action: SeccompAction::Errno(1),
        syscalls: vec![],
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let err = rt
        .block_on(NativeSandbox::new().oneshot(req))
        .unwrap_err()
        .to_string();
    assert!(err.contains("strict") && err.contains("compiler"), "{err}");
}

#[test]
fn artifacts_are_collected_and_planted_links_are_not() {
    let code = "import os\no = os.environ['SKILLGATE_OUTPUT_DIR']\nopen(o + '/report.txt', 'w').write('hello')\nos.symlink('/etc/passwd', o + '/link')\nos.link(o + '/report.txt', o + '/hard')\nos.makedirs(o + '/sub')\nopen(o + '/sub/b', 'wb').write(b'12')\n";
    let o = run(code);
    assert_eq!(
        o.status,
        Status::Ok,
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let names: Vec<_> = o.artifacts.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["sub/b"], "{:?}", rules(&o));
    assert!(rules(&o).contains(&"artifact.symlink"));
    assert!(rules(&o).contains(&"artifact.hardlink"));
}

#[test]
fn a_network_allow_list_is_refused_not_weakened() {
    let o = run_with("print(1)", Limits::default(), |r| {
        r.spec.network = skillgate_core::NetworkPolicy::AllowList(vec![]);
    });
    assert_eq!(o.status, Status::Error);
    assert!(
        rules(&o).contains(&"sandbox.unenforceable"),
        "{:?}",
        rules(&o)
    );
    assert!(o.stdout.is_empty());
}

#[test]
fn javascript_runs_too() {
    let skill = Skill::builder(
        "t",
        Language::JavaScript,
        b"process.stdin.on('data', d => console.log(JSON.parse(d).x + 1))".to_vec(),
    )
    .build();
    let req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({"x": 41}));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let o = rt.block_on(NativeSandbox::new().oneshot(req)).unwrap();
    assert_eq!(
        o.status,
        Status::Ok,
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.stdout, b"42\n");
}

#[test]
fn folder_files_come_from_the_skill_and_user_site_packages_stay_off() {
    use skillgate_core::FileKind;
    // A .pth file in every user site-packages folder a Python 3 could look in (HOME is
    // /work): with user site-packages on, it would run before the entry.
    let mut b = Skill::builder(
        "t",
        Language::Python,
        b"import os, helper\nprint(helper.X, os.environ.get('PTH_RAN'))\n".to_vec(),
    )
    .entry("scripts/main.py")
    .file(
        "scripts/helper.py",
        FileKind::Code(Language::Python),
        b"X = 42\n".to_vec(),
    );
    for minor in 6..=20 {
        b = b.file(
            format!(".local/lib/python3.{minor}/site-packages/evil.pth"),
            FileKind::Data,
            b"import os; os.environ['PTH_RAN'] = 'yes'\n".to_vec(),
        );
    }
    let req = ExecRequest::new(Caller::new("a", "t"), b.build(), serde_json::json!({}));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let o = rt.block_on(NativeSandbox::new().oneshot(req)).unwrap();
    assert_eq!(
        o.status,
        Status::Ok,
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "42 None\n");
}

#[test]
fn a_workspace_is_writable_handed_to_the_sandbox_user_and_never_executable() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("sub")).unwrap();
    // Written on the host (as an upload is): the step must be able to change it.
    std::fs::write(ws.path().join("sub/in.txt"), b"host").unwrap();
    let o = run_with(
        "import os, subprocess\n\
         print(os.getcwd())\n\
         open('in.txt', 'a').write('+step')\n\
         open('tool.sh', 'w').write('#!/bin/sh\\necho ran\\n')\n\
         os.chmod('tool.sh', 0o755)\n\
         try:\n    subprocess.run(['./tool.sh'])\n    print('executed')\n\
         except PermissionError:\n    print('noexec')\n",
        Limits::default(),
        |req| {
            req.spec.workspace = Some(skillgate_core::Workspace {
                host: ws.path().to_path_buf(),
                cwd: "sub".into(),
            })
        },
    );
    assert_eq!(
        o.status,
        Status::Ok,
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.stdout, b"/workspace/sub\nnoexec\n");
    assert_eq!(
        std::fs::read(ws.path().join("sub/in.txt")).unwrap(),
        b"host+step"
    );
    assert!(ws.path().join("sub/tool.sh").exists());
}

#[test]
fn a_workspace_that_is_not_a_directory_or_a_cwd_that_leaves_it_is_refused() {
    let ws = tempfile::tempdir().unwrap();
    for (host, cwd, why) in [
        (ws.path().join("missing"), "", "cannot be used"),
        (
            ws.path().to_path_buf(),
            "../..",
            "stay inside the workspace",
        ),
    ] {
        let skill = Skill::builder("t", Language::Python, b"print(1)".to_vec()).build();
        let mut req = ExecRequest::new(Caller::new("a", "t"), skill, serde_json::json!({}));
        req.spec.workspace = Some(skillgate_core::Workspace {
            host: host.clone(),
            cwd: cwd.into(),
        });
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let err = rt
            .block_on(NativeSandbox::new().oneshot(req))
            .expect_err("refused")
            .to_string();
        assert!(err.contains(why), "{host:?} {cwd}: {err}");
    }
}
