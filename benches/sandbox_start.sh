#!/usr/bin/env bash
# Times interpreter start-up side by side, in one run:
#   bare      the interpreter alone (fork + exec from a harness)
#   skillgate the same interpreter in skillgate's native sandbox (namespaces, fresh root,
#             cgroup, landlock, rlimits), timed per run inside the example binary
#   bwrap     the same interpreter under bubblewrap with comparable isolation
# for `python3 -c pass` and `node -e 0`, and prints medians and ratios.
#
# Usage: benches/sandbox_start.sh [RUNS]   (root; needs bubblewrap: apt-get install bubblewrap)
set -euo pipefail
RUNS="${1:-40}"
cd "$(dirname "$0")/.."
cargo build -q --release -p skillgate-sandbox --example sandbox_run
EXAMPLE=target/release/examples/sandbox_run
command -v bwrap >/dev/null || { echo "bwrap not found: apt-get install bubblewrap" >&2; exit 1; }

PY=$(python3 -c 'import sys; print(sys.executable)')   # the real executable, not a shim
NODE=$(node -p 'process.execPath')

python3 - "$RUNS" "$EXAMPLE" "$PY" "$NODE" <<'PYEOF'
import os, statistics, subprocess, sys, time

runs, example, py, node = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]

def prefix_of(exe):
    d = os.path.dirname(exe)
    return os.path.dirname(d) if os.path.basename(d) == "bin" else d

def bwrap_cmd(exe, args):
    cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
           "--uid", "1000", "--gid", "1000", "--cap-drop", "ALL", "--clearenv",
           "--setenv", "PATH", "/usr/local/bin:/usr/bin:/bin", "--setenv", "HOME", "/work",
           "--setenv", "LANG", "C.UTF-8",
           "--ro-bind", "/usr", "/usr", "--proc", "/proc", "--dev", "/dev",
           "--tmpfs", "/tmp", "--tmpfs", "/work", "--chdir", "/work"]
    for d in ("bin", "sbin", "lib", "lib64"):
        p = "/" + d
        if os.path.islink(p):
            cmd += ["--symlink", os.readlink(p), p]
        elif os.path.isdir(p):
            cmd += ["--ro-bind", p, p]
    pre = prefix_of(os.path.realpath(exe))
    if not pre.startswith("/usr"):
        cmd += ["--ro-bind", pre, pre]
    cmd += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    return cmd + [exe] + args

# Every contender gets the same small environment the sandbox gives a skill (the caller's
# variables, e.g. NODE_EXTRA_CA_CERTS, change start-up times by themselves).
CLEAN_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}

def once(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True,
                   env=CLEAN_ENV, cwd="/tmp")
    return (time.perf_counter() - t) * 1000

class Sandbox:
    """The example binary in serve mode: one sandboxed run per line, timed inside."""
    def __init__(self, lang, code):
        self.p = subprocess.Popen([example, lang, code, "serve"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    def once(self):
        self.p.stdin.write("go\n"); self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise SystemExit("the sandboxed run failed")
        return float(line)
    def close(self):
        self.p.stdin.close(); self.p.wait()

cases = [("python3 -c pass", py, ["-c", "pass"], "python", "pass"),
         ("node -e 0", node, ["-e", "0"], "javascript", "0")]
print(f"{runs} interleaved runs each; medians in ms (p10-p90); load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
print(f"{'case':18} {'bare':>16} {'skillgate':>16} {'bwrap':>16} {'sg/bare':>8} {'sg/bwrap':>9}")
for name, exe, args, lang, code in cases:
    sandbox = Sandbox(lang, code)
    bw_cmd = bwrap_cmd(exe, args)
    for _ in range(3):  # warm caches
        once([exe] + args); sandbox.once(); once(bw_cmd)
    bare, sg, bw = [], [], []
    # Interleaved, so load from other processes on the machine hits all three alike.
    for _ in range(runs):
        bare.append(once([exe] + args))
        sg.append(sandbox.once())
        bw.append(once(bw_cmd))
    sandbox.close()
    def fmt(v):
        q = statistics.quantiles(v, n=10)
        return f"{statistics.median(v):6.1f} ({q[0]:.0f}-{q[-1]:.0f})"
    m = statistics.median
    print(f"{name:18} {fmt(bare):>16} {fmt(sg):>16} {fmt(bw):>16} {m(sg)/m(bare):8.2f} {m(sg)/m(bw):9.2f}")
PYEOF
