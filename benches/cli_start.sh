#!/usr/bin/env bash
# Times one trivial skill end to end, as a user runs it, side by side in one run:
#   bare       /usr/bin/python3 (the real binary, never a shim) on the skill's code
#   bwrap      the same under bubblewrap with isolation comparable to skillgate's sandbox
#   sg-off     `skillgate run` with every layer disabled (--disable each): config, skill
#              folder, input gate and the native sandbox
#   sg-full    `skillgate run` with the full pipeline: the README's main command
#              (examples/skills/analyze-rows, examples/skillgate.toml, agent analyst-1 of
#              tenant acme) with a fresh --state-dir for this run of the script
# Each run is a whole process, from spawn to exit (release build); the contenders are
# interleaved in rotating order so load from other processes hits them alike. Prints the
# medians and the ratios full/bwrap and full/bare.
#
# Usage: benches/cli_start.sh [RUNS]   (root; needs bubblewrap: apt-get install bubblewrap)
#        SKILLGATE_BIN=/path/to/skillgate benches/cli_start.sh [RUNS]   (time that binary,
#        e.g. one saved from before a change, instead of building this checkout)
set -euo pipefail
RUNS="${1:-40}"
cd "$(dirname "$0")/.."
. benches/skillgate-bin.sh
command -v bwrap >/dev/null || { echo "bwrap not found: apt-get install bubblewrap" >&2; exit 1; }
PY=/usr/bin/python3
[ -x "$PY" ] && [ ! -L "$PY" ] || PY=$(readlink -f /usr/bin/python3)
STATE=$(mktemp -d /tmp/skillgate-cli-start.XXXXXX)
trap 'rm -rf "$STATE"' EXIT

python3 - "$RUNS" "$SG" "$PY" "$STATE" <<'PYEOF'
import os, statistics, subprocess, sys, time

runs, sg, py, state = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
skill = os.path.abspath("examples/skills/analyze-rows")
entry = os.path.join(skill, "scripts/main.py")
input_file = os.path.join(skill, "sample-input.json")
with open(input_file, "rb") as f:
    stdin_bytes = f.read()

# The environment the sandbox gives a skill, for bare and bwrap alike (the caller's own
# variables change interpreter start-up by themselves).
small_env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/work", "LANG": "C.UTF-8"}

def bwrap_cmd():
    cmd = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session",
           "--uid", "1000", "--gid", "1000", "--cap-drop", "ALL", "--clearenv",
           "--setenv", "PATH", small_env["PATH"], "--setenv", "HOME", "/work",
           "--setenv", "LANG", "C.UTF-8",
           "--ro-bind", "/usr", "/usr", "--proc", "/proc", "--dev", "/dev",
           "--tmpfs", "/tmp", "--tmpfs", "/work", "--ro-bind", skill, "/skill",
           "--chdir", "/work"]
    for d in ("bin", "sbin", "lib", "lib64"):
        p = "/" + d
        if os.path.islink(p):
            cmd += ["--symlink", os.readlink(p), p]
        elif os.path.isdir(p):
            cmd += ["--ro-bind", p, p]
    cmd += ["--ro-bind-try", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    return cmd + [py, "-s", "/skill/scripts/main.py"]

layers = ["policy", "prescan", "isolation", "seccomp", "network", "secrets", "monitor"]
run_args = [sg, "run", skill, "--input-file", input_file, "--agent", "analyst-1",
            "--tenant", "acme", "--config", "examples/skillgate.toml", "--state-dir", state]
off = run_args + [a for l in layers for a in ("--disable", l)]

# skillgate runs the first python3 on PATH (the example config names none): give it a PATH
# on which that is the same real interpreter as the others, not a version manager's.
sg_env = dict(os.environ, PATH=small_env["PATH"])
contenders = {
    "bare": ([py, "-s", entry], small_env),
    "bwrap": (bwrap_cmd(), small_env),
    "sg-off": (off, sg_env),
    "sg-full": (run_args, sg_env),
}

def once(argv, env):
    t = time.perf_counter()
    p = subprocess.run(argv, input=stdin_bytes, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    dt = (time.perf_counter() - t) * 1000
    if p.returncode != 0 or b"Processed" not in p.stdout:
        raise SystemExit(f"the timed run failed ({p.returncode}): {' '.join(argv)}\n"
                         f"{p.stdout.decode(errors='replace')}{p.stderr.decode(errors='replace')}")
    return dt

names = list(contenders)
times = {n: [] for n in names}
for _ in range(3):  # warm caches (and the monitor's store)
    for n in names:
        once(*contenders[n])
for i in range(runs):
    for k in range(len(names)):
        n = names[(i + k) % len(names)]
        times[n].append(once(*contenders[n]))

m = statistics.median
print(f"{runs} interleaved runs each, whole processes timed from spawn to exit;")
print(f"medians in ms (p10-p90); load {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
for n in names:
    q = statistics.quantiles(times[n], n=10)
    print(f"  {n:8} {m(times[n]):6.1f} ({q[0]:.1f}-{q[-1]:.1f})")
def ratio(a, b):
    paired = m([x / y for x, y in zip(times[a], times[b])])
    return f"{m(times[a]) / m(times[b]):.2f}x [per round {paired:.2f}x]"
print(f"full/bwrap {ratio('sg-full', 'bwrap')}")
print(f"full/bare  {ratio('sg-full', 'bare')}")
print(f"off/bwrap  {ratio('sg-off', 'bwrap')}")
PYEOF
