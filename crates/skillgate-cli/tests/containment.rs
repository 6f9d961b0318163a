//! The containment suite: attack scripts run through the real `skillgate run` with the
//! pre-scan disabled (the sandbox must contain what a scanner missed), and the host checks
//! that nothing got out. Network checks only ever touch listeners this test starts on
//! host loopback; "no route out" is read from the sandbox's own routing tables.
mod common;
use common::state_dir;
use serde_json::{Value, json};
use std::io::Read;
use std::net::{TcpListener, UdpSocket};
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::{Duration, Instant};

const CANARY_VAR: &str = "SKILLGATE_CONTAINMENT_CANARY";
const CANARY: &str = "canary-7f3a91";

/// Runs `code` (Python unless `lang` says otherwise) and returns the JSON report.
fn run_lang(lang: &str, code: &str, input: Value, extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let ext = if lang == "python" { "py" } else { "js" };
    let file = dir.path().join(format!("attack.{ext}"));
    std::fs::write(&file, code).unwrap();
    let out = assert_cmd::Command::cargo_bin("skillgate")
        .unwrap()
        .env(CANARY_VAR, CANARY)
        .args([
            "run",
            "--lang",
            lang,
            "--disable",
            "prescan",
            // Bare scripts belong to no tenant, so the policy gate would deny them; the
            // suite is about the sandbox.
            "--disable",
            "policy",
            "--format",
            "json",
        ])
        .arg("--state-dir")
        .arg(state_dir())
        .arg("--code")
        .arg(&file)
        .arg("--input")
        .arg(input.to_string())
        .args(extra)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}); stdout {} stderr {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn run(code: &str, input: Value) -> Value {
    run_lang("python", code, input, &[])
}

/// The skill's stdout parsed as JSON, after checking the run itself was `ok`.
fn answer(report: &Value) -> Value {
    assert_eq!(report["status"], "ok", "{report:#}");
    serde_json::from_str(report["stdout"].as_str().unwrap())
        .unwrap_or_else(|e| panic!("skill output is not JSON ({e}): {report:#}"))
}

const PROBE: &str = r#"
import json, os, sys
def attempt(f):
    try:
        r = f()
        return {"ok": True, "value": r if isinstance(r, (str, int, list, type(None))) else str(r)}
    except Exception as e:
        return {"ok": False, "error": type(e).__name__}
"#;

#[test]
fn host_files_are_not_readable() {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let secret = tempfile::Builder::new()
        .prefix(".skillgate-containment-")
        .tempfile_in(&home)
        .unwrap();
    std::fs::write(secret.path(), "host secret").unwrap();
    let tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let code = format!(
        "{PROBE}\nd = json.load(sys.stdin)\nprint(json.dumps({{p: attempt(lambda p=p: open(p).read()) for p in d['paths']}}))"
    );
    let paths = [
        secret.path().to_str().unwrap(),
        tree.to_str().unwrap(),
        "/etc/shadow",
        "/proc/1/environ",
        "/root/.bashrc",
        "/proc/1/root/etc/shadow",
    ];
    let a = answer(&run(&code, json!({ "paths": paths })));
    for p in paths {
        let r = &a[p];
        let leaked = r["ok"] == true
            && (r["value"].as_str().unwrap_or("").contains("host secret")
                || r["value"].as_str().unwrap_or("").contains(CANARY)
                || r["value"].as_str().unwrap_or("").contains("[package]")
                || p == "/etc/shadow");
        assert!(!leaked, "{p} was readable: {r}");
    }
}

#[test]
fn nothing_outside_the_writable_directories_can_be_written() {
    let host_dir = tempfile::tempdir().unwrap();
    let host_target = host_dir.path().join("planted");
    let code = format!(
        "{PROBE}\nd = json.load(sys.stdin)\nprint(json.dumps({{p: attempt(lambda p=p: open(p, 'w').write('x')) for p in d['paths']}}))"
    );
    let targets = [
        host_target.to_str().unwrap(),
        "/usr/planted",
        "/etc/planted",
        "/planted",
        "/root/planted",
        "/proc/sys/kernel/hostname",
        "/dev/planted",
    ];
    let a = answer(&run(&code, json!({ "paths": targets })));
    for t in targets {
        assert_eq!(a[t]["ok"], false, "{t} was writable: {}", a[t]);
    }
    assert!(!host_target.exists());
    for p in ["/usr/planted", "/etc/planted", "/planted"] {
        assert!(!Path::new(p).exists(), "{p} appeared on the host");
    }
    // The writable places do work.
    let a = answer(&run(
        &format!(
            "{PROBE}\nprint(json.dumps([attempt(lambda p=p: open(p, 'w').write('x')) for p in ['/work/a', '/tmp/a', '/out/a']]))"
        ),
        json!({}),
    ));
    assert!(a.as_array().unwrap().iter().all(|r| r["ok"] == true), "{a}");
}

#[test]
fn loopback_listeners_on_the_host_are_unreachable() {
    let mut tcp = Vec::new();
    let mut udp = Vec::new();
    let mut targets = Vec::new();
    for ip in ["127.0.0.1", "127.0.0.2"] {
        let t = TcpListener::bind((ip, 0)).unwrap();
        t.set_nonblocking(true).unwrap();
        let u = UdpSocket::bind((ip, 0)).unwrap();
        u.set_nonblocking(true).unwrap();
        targets.push(json!({"ip": ip, "tcp": t.local_addr().unwrap().port(), "udp": u.local_addr().unwrap().port()}));
        tcp.push(t);
        udp.push(u);
    }
    let code = format!(
        r#"{PROBE}
import socket
d = json.load(sys.stdin)
out = []
for t in d["targets"]:
    def tcp(t=t):
        s = socket.create_connection((t["ip"], t["tcp"]), timeout=1); s.sendall(b"hi"); return "connected"
    def udp(t=t):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"hi", (t["ip"], t["udp"])); return "sent"
    out.append({{"tcp": attempt(tcp), "udp": attempt(udp)}})
print(json.dumps(out))
"#
    );
    let a = answer(&run(&code, json!({ "targets": targets })));
    for r in a.as_array().unwrap() {
        assert_eq!(r["tcp"]["ok"], false, "{r}");
    }
    for t in &tcp {
        assert!(t.accept().is_err(), "a connection reached the host");
    }
    let mut buf = [0u8; 16];
    for u in &udp {
        assert!(
            u.recv_from(&mut buf).is_err(),
            "a datagram reached the host"
        );
    }
}

#[test]
fn the_only_interface_is_loopback_and_there_is_no_route() {
    // Through /proc/self: the sandbox's /proc shows only its processes (subset=pid), with
    // no /proc/net link.
    let code = format!(
        "{PROBE}\nprint(json.dumps({{p: attempt(lambda p=p: open(p).read()) for p in ['/proc/self/net/route', '/proc/self/net/ipv6_route', '/proc/self/net/dev']}}))"
    );
    let a = answer(&run(&code, json!({})));
    let route = a["/proc/self/net/route"]["value"].as_str().unwrap();
    assert_eq!(
        route.lines().count(),
        1,
        "IPv4 routes besides the header: {route}"
    );
    if let Some(v6) = a["/proc/self/net/ipv6_route"]["value"].as_str() {
        for line in v6.lines() {
            let iface = line.split_whitespace().last().unwrap_or("");
            assert_eq!(iface, "lo", "IPv6 route via another interface: {line}");
        }
    }
    let dev = a["/proc/self/net/dev"]["value"].as_str().unwrap();
    let ifaces: Vec<&str> = dev
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next())
        .map(str::trim)
        .collect();
    assert_eq!(ifaces, ["lo"], "{dev}");
}

#[test]
fn abstract_unix_sockets_of_the_host_are_unreachable() {
    use std::os::linux::net::SocketAddrExt;
    let name = format!("skillgate-containment-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let listener = UnixListener::bind_addr(&addr).unwrap();
    listener.set_nonblocking(true).unwrap();
    let code = format!(
        "{PROBE}\nimport socket\nd = json.load(sys.stdin)\ndef c():\n    s = socket.socket(socket.AF_UNIX); s.connect('\\0' + d['name']); return 'connected'\nprint(json.dumps(attempt(c)))"
    );
    let a = answer(&run(&code, json!({ "name": name })));
    assert_eq!(a["ok"], false, "{a}");
    assert!(listener.accept().is_err());
}

#[test]
fn host_processes_are_invisible_and_unsignallable() {
    let mut victim = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let code = format!(
        r#"{PROBE}
import signal
d = json.load(sys.stdin)
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print(json.dumps({{"pids": pids, "kill": attempt(lambda: os.kill(d["victim"], signal.SIGKILL)), "me": os.getpid()}}))
"#
    );
    let a = answer(&run(&code, json!({ "victim": victim.id() })));
    let pids: Vec<u64> = serde_json::from_value(a["pids"].clone()).unwrap();
    assert!(
        pids.iter().all(|p| *p <= 3),
        "host processes visible: {pids:?}"
    );
    assert_eq!(a["me"], 2, "the skill is pid 2 under the sandbox's init");
    assert!(
        victim.try_wait().unwrap().is_none(),
        "the host process was killed"
    );
    victim.kill().unwrap();
    let _ = victim.wait();
}

#[test]
fn killing_its_own_parent_changes_nothing() {
    let code = "import os, signal\nfor p in (os.getppid(), 1):\n    try:\n        os.kill(p, signal.SIGKILL)\n    except OSError:\n        pass\nprint('{\"alive\": true}')\n";
    let a = answer(&run(code, json!({})));
    assert_eq!(a["alive"], true);
}

#[test]
fn a_setsid_double_fork_daemon_does_not_outlive_the_run() {
    let tag = format!("sgd{}", std::process::id() % 100_000);
    let code = format!(
        r#"import ctypes, os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(15, b"{tag}", 0, 0, 0)
        time.sleep(120)
    os._exit(0)
time.sleep(0.3)
print('{{"started": true}}')
"#
    );
    let a = answer(&run(&code, json!({})));
    assert_eq!(a["started"], true);
    let survivors: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("comm")).ok())
        .filter(|c| c.trim() == tag)
        .collect();
    assert!(survivors.is_empty(), "the daemon survived: {survivors:?}");
}

#[test]
fn an_orphan_holding_stdout_does_not_stall_the_run() {
    let code = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\nprint('{\"done\": true}')\n";
    let t = Instant::now();
    let a = answer(&run(code, json!({})));
    assert_eq!(a["done"], true);
    // The orphan sleeps for 60 s: a run that waited for it would take that long.
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
}

#[test]
fn the_callers_environment_does_not_pass_through() {
    let code = format!(
        "{PROBE}\nprint(json.dumps({{'env': dict(os.environ), 'init': attempt(lambda: open('/proc/1/environ', 'rb').read().decode('latin-1'))}}))"
    );
    let a = answer(&run(&code, json!({})));
    let text = a.to_string();
    assert!(
        !text.contains(CANARY),
        "the caller's variable leaked: {text}"
    );
    let keys: Vec<&String> = a["env"].as_object().unwrap().keys().collect();
    assert!(
        keys.iter().all(
            |k| ["PATH", "LANG", "HOME", "SKILLGATE_OUTPUT_DIR", "TMPDIR"].contains(&k.as_str())
        ),
        "{keys:?}"
    );
}

#[test]
fn the_skill_has_no_privileges() {
    let code = "import json, os\nst = dict(l.split(':\\t') for l in open('/proc/self/status').read().splitlines() if ':\\t' in l)\nprint(json.dumps({k: st[k].strip() for k in ['Uid', 'Gid', 'Groups', 'CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb', 'NoNewPrivs', 'Seccomp', 'SigBlk']}))";
    let a = answer(&run(code, json!({})));
    assert_eq!(a["Uid"], "1000\t1000\t1000\t1000");
    assert_eq!(a["Gid"], "1000\t1000\t1000\t1000");
    assert_eq!(a["Groups"], "");
    for cap in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
        assert_eq!(a[cap], "0000000000000000", "{cap}");
    }
    assert_eq!(a["NoNewPrivs"], "1");
    // No signal blocked by the embedding process survives into the skill. (SigIgn is
    // not checked here: Python itself ignores SIGPIPE and SIGXFSZ at start-up.)
    assert_eq!(a["SigBlk"], "0000000000000000");
    // The default pipeline's seccomp layer decided a profile; the sandbox installed it.
    assert_eq!(a["Seccomp"], "2", "seccomp filter mode");
}

#[test]
fn inherited_descriptors_are_closed() {
    // bash opens fd 7 without close-on-exec, so skillgate inherits it; the skill must not.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fds.py");
    std::fs::write(
        &file,
        "import json, os\nprint(json.dumps(sorted(int(f) for f in os.listdir('/proc/self/fd'))))",
    )
    .unwrap();
    let bin = assert_cmd::cargo::cargo_bin("skillgate");
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "exec 7</etc/hostname; exec {} run --lang python --disable prescan --disable policy --state-dir {} --format json --code {}",
            bin.display(),
            state_dir().display(),
            file.display()
        ))
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let fds = answer(&report);
    assert_eq!(
        fds,
        json!([0, 1, 2, 3]),
        "only stdio (and the listing's own fd)"
    );
}

#[test]
fn raw_and_packet_sockets_are_refused_and_netlink_sees_only_the_sandbox() {
    let code = format!(
        r#"{PROBE}
import socket
print(json.dumps({{
  "raw": attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) and "open"),
  "packet": attempt(lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW) and "open"),
  "ifaces": attempt(lambda: [n for _, n in socket.if_nameindex()]),
}}))
"#
    );
    let a = answer(&run(&code, json!({})));
    assert_eq!(a["raw"]["ok"], false, "{a}");
    assert_eq!(a["packet"]["ok"], false, "{a}");
    // if_nameindex asks the kernel over netlink: either the seccomp profile refuses the
    // netlink socket, or the kernel answers for the sandbox's namespace alone.
    assert!(
        a["ifaces"]["ok"] == false || a["ifaces"]["value"] == json!(["lo"]),
        "{a}"
    );
}

#[test]
fn proc_sys_and_device_nodes_are_locked_down() {
    let code = format!(
        r#"{PROBE}
print(json.dumps({{
  "dev": sorted(os.listdir("/dev")),
  "mknod": attempt(lambda: os.mknod("/tmp/sda", 0o600 | 0o060000, os.makedev(8, 0))),
  "sysrq": attempt(lambda: open("/proc/sysrq-trigger", "w").write("h")),
  "core": attempt(lambda: open("/proc/sys/kernel/core_pattern", "w").write("|/tmp/x")),
  "null": attempt(lambda: open("/dev/null", "w").write("x")),
}}))
"#
    );
    let a = answer(&run(&code, json!({})));
    assert_eq!(
        a["dev"],
        json!([
            "fd", "full", "null", "random", "stderr", "stdin", "stdout", "urandom", "zero"
        ])
    );
    for k in ["mknod", "sysrq", "core"] {
        assert_eq!(a[k]["ok"], false, "{k}: {}", a[k]);
    }
    assert_eq!(a["null"]["ok"], true);
}

#[test]
fn planted_links_are_not_collected_as_artifacts() {
    let code = "import os\no = os.environ['SKILLGATE_OUTPUT_DIR']\nopen(o + '/ok.txt', 'w').write('fine')\nos.symlink('/etc/shadow', o + '/shadow')\nos.symlink('/proc/1/environ', o + '/environ')\nos.link(o + '/ok.txt', o + '/second-name')\nopen(o + '/plain.txt', 'w').write('plain')\nprint('{}')";
    // The seccomp presets already refuse link and symlink; switch that layer off to test
    // the collector itself, the last line of defence.
    let r = run_lang("python", code, json!({}), &["--disable", "seccomp"]);
    assert_eq!(r["status"], "ok", "{r:#}");
    assert_eq!(r["exit_code"], 0, "{r:#}");
    let names: Vec<&str> = r["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["plain.txt"], "{r:#}");
    let rules: Vec<&str> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule_id"].as_str().unwrap())
        .collect();
    assert!(
        rules.contains(&"artifact.symlink") && rules.contains(&"artifact.hardlink"),
        "{rules:?}"
    );
}

#[test]
fn a_cpu_spin_is_killed_at_the_wall_clock_limit() {
    let r = run_lang(
        "python",
        "while True: pass",
        json!({}),
        &["--timeout", "1s"],
    );
    assert_eq!(r["status"], "timeout", "{r:#}");
    assert_eq!(r["signal"], 9, "{r:#}");
    // Killed by the limit, not before it.
    assert!(r["duration_ms"].as_u64().unwrap() >= 1000, "{r:#}");
}

#[test]
fn a_memory_bomb_is_resource_exhausted() {
    let r = run_lang(
        "python",
        "b = []\nwhile True: b.append(bytearray(16 << 20))",
        json!({}),
        &["--memory", "64MiB"],
    );
    assert_eq!(r["status"], "resource_exhausted", "{r:#}");
    assert!(r.to_string().contains("limit.memory"), "{r:#}");
}

#[test]
fn a_fork_bomb_is_resource_exhausted() {
    let code = "import os, time\nwhile True:\n    try:\n        if os.fork() == 0:\n            time.sleep(5); os._exit(0)\n    except OSError:\n        break\nprint('{}')\n";
    let r = run(code, json!({}));
    assert_eq!(r["status"], "resource_exhausted", "{r:#}");
    assert!(r.to_string().contains("limit.pids"), "{r:#}");
}

#[test]
fn a_disk_bomb_fills_only_its_capped_tmpfs() {
    let code = "import json, os\nn = 0\ntry:\n    for i in range(10000):\n        open('/tmp/f%d' % i, 'wb').write(b'x' * (1 << 20)); n += 1\nexcept OSError as e:\n    print(json.dumps({'errno': e.errno, 'mib': n}))\n";
    let a = answer(&run(code, json!({})));
    // 64 MiB work directory cap by default; ENOSPC (28) or EFBIG/ENOMEM stop it early.
    assert!(a["mib"].as_u64().unwrap() <= 64, "{a}");
    assert!([28, 27, 12].contains(&a["errno"].as_i64().unwrap()), "{a}");
}

#[test]
fn an_output_bomb_is_truncated_and_resource_exhausted() {
    let r = run(
        "import sys\nfor _ in range(100): sys.stdout.write('z' * 65536)",
        json!({}),
    );
    assert_eq!(r["status"], "resource_exhausted", "{r:#}");
    assert_eq!(r["stdout_truncated"], true);
    assert_eq!(r["stdout"].as_str().unwrap().len(), 1024 * 1024);
}

#[test]
fn javascript_is_contained_too() {
    let code = "const fs = require('fs'); let r = {}; for (const p of ['/etc/shadow', '/root']) { try { fs.readdirSync(p); r[p] = 'read' } catch (e) { r[p] = e.code } } console.log(JSON.stringify({uid: process.getuid(), r}))";
    let rep = run_lang("javascript", code, json!({}), &[]);
    let a = answer(&rep);
    assert_eq!(a["uid"], 1000);
    assert_ne!(a["r"]["/etc/shadow"], "read");
}

#[test]
fn the_examples_run_isolated() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/skills");
    for skill in ["analyze-rows", "count-items"] {
        let dir = root.join(skill);
        let out = assert_cmd::Command::cargo_bin("skillgate")
            .unwrap()
            .args(["run", "--format", "json", "--input-file"])
            .arg(dir.join("sample-input.json"))
            .arg(&dir)
            .args(["--agent", "analyst-1", "--tenant", "acme", "--config"])
            .arg(root.join("../skillgate.toml"))
            .arg("--state-dir")
            .arg(state_dir())
            .output()
            .unwrap();
        let mut stderr = String::new();
        out.stderr.as_slice().read_to_string(&mut stderr).unwrap();
        assert!(!stderr.contains("not isolated"), "{stderr}");
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["status"], "ok", "{skill}: {r:#}");
        assert_eq!(r["exit_code"], 0, "{skill}: {r:#}");
    }
}
