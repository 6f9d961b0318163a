#!/usr/bin/env bash
# Times session steps as a user runs them through the CLI (each `skillgate session ...`
# a whole process, from spawn to exit; release build), against one sandboxed
# `skillgate run` of the same code:
#   run        `skillgate run --code step.py`: config, pipeline, one sandbox
#   warm@N     `session exec` of the same code in a session of N steps whose workspace
#              the previous command parked at the head (continue it, run the step,
#              record), with the CLI's snapshot policy (--snapshot-every S): the mean of
#              S consecutive steps, one of which packs a snapshot
#   cold@N     `session exec` in a session of N steps whose parked workspace cannot be
#              continued (its ticket removed, as a process killed mid-step leaves it)
#              and whose newest snapshot is the snapshot policy's worst case behind the
#              head (S-1 steps to replay, each through the whole pipeline, before the
#              step)
#   empty@N    `session replay --cold`: the whole log replayed from an empty workspace
#              (no snapshot; once per length: what the snapshots save)
# One session per length mixes steps and uploads (an upload of a small CSV after every
# 4th step); it is built with a snapshot at every step (so building it costs a snapshot
# hit per step, not a replay). N counts the steps it was built with; the timed steps add
# to it. A cold step (with its S-1 steps before it) ends with a snapshot at the head, so
# the warm step can follow it in the same session. The contenders are interleaved in rotating order so load from
# other processes hits them alike. The config is the example's without the monitor's
# request-rate spike detection (the bench is one). Prints medians (p10-p90) and the ratios
# warm/run and cold/warm at each length, with the load average.
#
# Usage: benches/sessions.sh [RUNS] [LENGTHS] [EVERY]   (root; defaults 15 "10 100 1000" 2,
#        the CLI's own snapshot interval)
#        SKILLGATE_BIN=/path/to/skillgate benches/sessions.sh ...   (time that binary
#        instead of building this checkout)
set -euo pipefail
RUNS="${1:-15}"
LENGTHS="${2:-10 100 1000}"
EVERY="${3:-2}"
cd "$(dirname "$0")/.."
. benches/skillgate-bin.sh
WORK=$(mktemp -d /tmp/skillgate-sessions-bench.XXXXXX)
# The sessions' parked workspaces are tmpfs mounts beneath it (each length's `session rm`
# unmounts its own; this, what a failed run left).
trap 'awk -v w="$WORK/" '"'"'index($5, w) == 1 {print $5}'"'"' /proc/self/mountinfo | xargs -r umount -l; rm -rf "$WORK"' EXIT

python3 - "$RUNS" "$LENGTHS" "$EVERY" "$SG" "$WORK" <<'PYEOF'
import json, os, statistics, subprocess, sys, time

runs, lengths, every, sg, work = (int(sys.argv[1]), [int(n) for n in sys.argv[2].split()],
                                  int(sys.argv[3]), sys.argv[4], sys.argv[5])
step = os.path.join(work, "step.py")
with open(step, "w") as f:
    # Works in a session's workspace and in a plain run's working directory alike.
    f.write("import json, os\n"
            "files = sorted(os.listdir('.'))\n"
            "with open('count.txt', 'a') as f:\n"
            "    f.write('%d\\n' % len(files))\n"
            "print(json.dumps({'files': len(files)}))\n")
# The example config, but for the monitor's request-rate spike, which this bench is (it
# would throttle the agent to 6 runs a minute): its other detections stay.
import shutil
for name in ("entities.json", "grants.json", "catalogue.json"):
    shutil.copy(os.path.join("examples", name), work)
rules = os.path.join(work, "monitor-rules")
os.mkdir(rules)
with open("rules/monitor/default.toml") as f:
    blocks = f.read().split("[[detection]]")
kept = [b for b in blocks if 'id = "monitor.rate_spike"' not in b]
assert len(kept) == len(blocks) - 1, "rules/monitor/default.toml has monitor.rate_spike"
with open(os.path.join(rules, "default.toml"), "w") as f:
    f.write("[[detection]]".join(kept))
with open("examples/skillgate.toml") as f:
    text = f.read()
config = os.path.join(work, "skillgate.toml")
with open(config, "w") as f:
    f.write(text.replace("[monitor]\n", f'[monitor]\nrules = "{rules}"\n', 1))
who = ["--config", config, "--agent", "analyst-1", "--tenant", "acme"]
# skillgate runs the first python3 on PATH (the example config names none): the same
# real interpreter for every contender, not a version manager's shim.
env = dict(os.environ, PATH="/usr/local/bin:/usr/bin:/bin")

def sg_run(args, state, check=None):
    t = time.perf_counter()
    p = subprocess.run([sg, *args, *who, "--state-dir", state], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dt = (time.perf_counter() - t) * 1000
    if p.returncode != 0:
        raise SystemExit(f"failed ({p.returncode}): {' '.join(args)}\n"
                         f"{p.stdout.decode(errors='replace')}{p.stderr.decode(errors='replace')}")
    out = p.stdout.decode()
    if check is not None:
        check(json.loads(out))
    return dt, out

def exec_args(sid, snapshot_every):
    return ["session", "exec", sid, "--code", step, "--lang", "python", "--format", "json",
            "--snapshot-every", str(snapshot_every)]

def expect(snapshot_behind):
    """A check of `session exec --format json`: restored from the snapshot that many
    events behind the head (None: the parked workspace continued), and recorded."""
    def check(r):
        rest = r["restored"]
        if r["report"]["status"] != "ok" or r["seq"] is None:
            raise SystemExit(f"the step did not run ok: {r}")
        if snapshot_behind is None:
            if not rest["parked"] or rest["replayed"] != 0:
                raise SystemExit(f"expected the parked workspace at the head: {rest}")
        elif rest["snapshot"] is None or rest["replayed"] != snapshot_behind or rest["warm"]:
            raise SystemExit(f"expected a snapshot {snapshot_behind} events behind: {rest}")
    return check

def build(n, state):
    """A session of n steps, an upload after every 4th, with a snapshot at the head."""
    sid = sg_run(["session", "new"], state)[1].strip()
    csv = os.path.join(work, "part.csv")
    for i in range(n):
        sg_run(exec_args(sid, 1), state)
        if i % 4 == 3:
            with open(csv, "w") as f:
                f.write("n,value\n" + "".join(f"{j},{i * j}\n" for j in range(20)))
            sg_run(["session", "upload", sid, csv, f"data/part-{i}.csv"], state)
    # The last event may be an upload: one more step brings a snapshot to the head.
    sg_run(exec_args(sid, 1), state)
    return sid

m = statistics.median
def show(name, xs):
    q = statistics.quantiles(xs, n=10) if len(xs) > 1 else [xs[0], xs[0]]
    return f"  {name:10} {m(xs):8.1f} ({q[0]:.1f}-{q[-1]:.1f})  n={len(xs)}"

print(f"load {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f} "
      f"on {os.cpu_count()} CPUs; snapshot every {every} steps; {runs} runs each", flush=True)
run_state = os.path.join(work, "run-state")
for _ in range(3):
    sg_run(["run", "--code", step, "--lang", "python"], run_state)
rows = []
for n in lengths:
    t0 = time.perf_counter()
    state = os.path.join(work, f"state-{n}")
    sid = build(n, state)
    built = time.perf_counter() - t0
    times = {"run": [], "warm": [], "cold": []}
    # cold: every-1 steps without a snapshot, the parked workspace's ticket taken away
    # (what a process killed mid-step leaves), then the timed step replays them.
    ticket = os.path.join(state, "session-workspaces", sid, "head")
    def cold_once():
        for _ in range(every - 1):
            sg_run(exec_args(sid, 10**6), state)
        os.remove(ticket)
        return sg_run(exec_args(sid, every), state, expect(every - 1))[0]
    # warm: one cycle of the snapshot policy (the cold step before ends on a snapshot).
    def warm_once():
        return statistics.mean(sg_run(exec_args(sid, every), state, expect(None))[0]
                               for _ in range(every))
    contenders = {
        "run": lambda: sg_run(["run", "--code", step, "--lang", "python"], run_state)[0],
        "warm": warm_once,
        "cold": cold_once,
    }
    names = list(contenders)
    for i in range(runs):
        for k in range(len(names)):
            name = names[(i + k) % len(names)]
            times[name].append(contenders[name]())
    empty, out = sg_run(["session", "replay", sid, "--cold", "--format", "json"], state)
    replayed = json.loads(out)["restored"]["replayed"]
    print(f"{n} steps (session built in {built:.0f} s); medians in ms (p10-p90):")
    for name in names:
        print(show(name, times[name]))
    print(f"  empty      {empty:8.1f}  ({replayed} events replayed from nothing)")
    w, r, c = m(times["warm"]), m(times["run"]), m(times["cold"])
    per = lambda a, b: m([x / y for x, y in zip(times[a], times[b])])
    print(f"  warm/run {w / r:.2f}x [per round {per('warm', 'run'):.2f}x]  "
          f"cold/warm {c / w:.2f}x [per round {per('cold', 'warm'):.2f}x]  "
          f"empty/warm {empty / w:.1f}x", flush=True)
    rows.append((n, r, w, c, empty))
    sg_run(["session", "rm", sid], state)
print(f"load {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f} at the end")
print("| steps | run | warm | cold | replay from empty | warm/run | cold/warm |")
for n, r, w, c, e in rows:
    print(f"| {n} | {r:.1f} | {w:.1f} | {c:.1f} | {e:.0f} | {w / r:.2f}x | {c / w:.2f}x |")
PYEOF
