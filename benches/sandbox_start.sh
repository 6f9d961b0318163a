#!/usr/bin/env bash
# Times interpreter start-up side by side, in one run:
#   bare      the interpreter alone (spawned by the same harness)
#   skillgate the same interpreter in skillgate's native sandbox (namespaces, fresh root,
#             cgroup, landlock, rlimits; no seccomp filter, like bwrap's default)
#   bwrap     the same interpreter under bubblewrap with comparable isolation
# for `python3 -c pass` and `node -e 0`, and prints medians and ratios. One harness process
# (the sandbox_run example) times all three, from spawn to exit, in rotating order.
#
# Usage: benches/sandbox_start.sh [RUNS]   (root; needs bubblewrap: apt-get install bubblewrap)
set -euo pipefail
RUNS="${1:-40}"
cd "$(dirname "$0")/.."
cargo build -q --release -p skillgate-sandbox --example sandbox_run
EXAMPLE=target/release/examples/sandbox_run
command -v bwrap >/dev/null || { echo "bwrap not found: apt-get install bubblewrap" >&2; exit 1; }

# The real executables, never a shim: Debian's /usr/bin/python3 when there is one (a pyenv
# build starts several times slower and would hide the sandbox's cost), else the first
# python3 on PATH, resolved. The sandbox finds its interpreter on PATH, so that directory
# goes first for it too.
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=$(python3 -c 'import sys; print(sys.executable)'); fi
export PATH="$(dirname "$PY"):$PATH"
NODE=$(node -p 'process.execPath')

python3 - "$RUNS" "$EXAMPLE" "$PY" "$NODE" <<'PYEOF'
import json, os, statistics, subprocess, sys

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

class Timer:
    """The example binary in serve mode times every contender in one process, the same way:
    `go` is one run in skillgate's sandbox; a JSON argv is one run of that command outside
    it, with the same small environment the sandbox gives a skill (the caller's variables,
    e.g. NODE_EXTRA_CA_CERTS, change start-up times by themselves)."""
    def __init__(self, lang, code):
        self.p = subprocess.Popen([example, lang, code, "serve"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    def ask(self, line):
        self.p.stdin.write(line + "\n"); self.p.stdin.flush()
        out = self.p.stdout.readline()
        if not out:
            raise SystemExit(f"the timed run failed: {line}")
        return float(out)
    def sandbox(self):
        return self.ask("go")
    def command(self, argv):
        return self.ask(json.dumps(argv))
    def close(self):
        self.p.stdin.close(); self.p.wait()

cases = [("python3 -c pass", py, ["-c", "pass"], "python", "pass"),
         ("node -e 0", node, ["-e", "0"], "javascript", "0")]
print(f"{runs} interleaved runs each, all timed by one harness process from spawn to exit;")
print(f"medians in ms (p10-p90); load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
print("ratios: of the medians, and [the median of the per-round ratios]")
print(f"{'case':16} {'bare':>16} {'skillgate':>16} {'bwrap':>16} {'sg/bare':>15} {'sg/bwrap':>15}")
for name, exe, args, lang, code in cases:
    timer = Timer(lang, code)
    bw_cmd = bwrap_cmd(exe, args)
    for _ in range(3):  # warm caches
        timer.command([exe] + args); timer.sandbox(); timer.command(bw_cmd)
    bare, sg, bw = [], [], []
    # Interleaved, so load from other processes on the machine hits all three alike; the
    # order rotates each round so no contender always runs right after another.
    contenders = [lambda: bare.append(timer.command([exe] + args)),
                  lambda: sg.append(timer.sandbox()),
                  lambda: bw.append(timer.command(bw_cmd))]
    for i in range(runs):
        for k in range(3):
            contenders[(i + k) % 3]()
    timer.close()
    def fmt(v):
        q = statistics.quantiles(v, n=10)
        return f"{statistics.median(v):6.1f} ({q[0]:.0f}-{q[-1]:.0f})"
    m = statistics.median
    def ratio(a, b):
        paired = m([x / y for x, y in zip(a, b)])
        return f"{m(a) / m(b):.2f} [{paired:.2f}]"
    print(f"{name:16} {fmt(bare):>16} {fmt(sg):>16} {fmt(bw):>16} {ratio(sg, bare):>15} {ratio(sg, bw):>15}")
PYEOF
