#!/usr/bin/env bash
# Load on `skillgate serve` (a benchmark, not a test; all traffic to 127.0.0.1).
#
# Builds release, starts `serve` on 127.0.0.1 (any free port) with the example config (its
# entities declaring the load's agents) and a fresh state dir, creates a builder key, 8
# agent keys for the unloaded runs and AGENTS for the load, publishes the trivial skill
# (examples/skills/analyze-rows, the README's main example) and then:
#   1. unloaded: sequential runs on one keep-alive connection, timed by the client, next
#      to the answer's `Server-Timing` header (to the microsecond: `pipeline`, the wall
#      time through the layers and the executor, measured in the server around the
#      engine's run; `skill`, the skill's own run in the executor). Client time less
#      `pipeline` is what the server adds (HTTP, authentication, admission, body parsing,
#      the registry lookup, the JSON answer); client time less the executor's whole run
#      (`skill` plus the executor's own set-up and tear-down, the report's `executor`
#      layer timing) is what skillgate adds over the executor (the server and the six
#      other layers); client time less `skill` is everything skillgate adds to the skill's
#      own run (the server, every layer, the sandbox's set-up and tear-down);
#   2. `hey` (Debian's load generator; installed with apt-get when missing) at concurrency
#      1, 8, 32 and 128 for DURATION each: throughput, p50 and p99 of the admitted (2xx)
#      answers, the count of 429s (shed beyond the concurrency limit and its queue) and of
#      any other status, p99 against the unloaded p99;
#   3. the audit trail: every 2xx run answer must have exactly one `execution` record
#      (counted, and no request id twice), and nothing shed may have one;
#   4. the server's RSS before and after the load.
# With --soak DURATION (e.g. 10m): instead of the steps 2-3 sweep, drives concurrency 8 for
# that long and samples the server's RSS every 10 s, reporting its growth from the first
# sample after warm-up to the last (target: under 10%).
#
# The load is spread over AGENTS agent keys (--agents, default 20), one after another: each
# sweep level, and each of AGENTS equal slices of the soak, is driven by the next key (hey
# sends one key). The monitor's rate-spike detection throttles an agent whose requests in
# the last minute are 10 times its average before that minute (rules/monitor/default.toml);
# an agent whose load lasts under a minute has nothing before it, so a well-behaved agent
# is never throttled and the load exercises sandbox runs, not the deny path. Keep the soak's
# slices under a minute (the script says so when they are not). The warm-up and the
# unloaded runs take turns over 8 keys of their own.
#
# Usage: benches/serve_load.sh [--duration 10s] [--soak 10m] [--agents 20]
#        SKILLGATE_BIN=/path/to/skillgate benches/serve_load.sh   (that binary instead of
#        building this checkout)
#        SERVE_ARGS="--queue-order oldest-first" benches/serve_load.sh   (more `serve` flags)
set -euo pipefail
DURATION=10s
SOAK=
AGENTS=20
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) DURATION="$2"; shift 2 ;;
    --soak) SOAK="$2"; shift 2 ;;
    --agents) AGENTS="$2"; shift 2 ;;
    *) echo "usage: $0 [--duration 10s] [--soak 10m] [--agents 20]" >&2; exit 2 ;;
  esac
done
case "$AGENTS" in ''|*[!0-9]*|0) echo "--agents: expected a positive number, got '$AGENTS'" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.."
. benches/skillgate-bin.sh
if ! command -v hey >/dev/null; then
  echo "installing hey (Debian's HTTP load generator)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends hey >/dev/null
fi
WORK=$(mktemp -d /tmp/skillgate-serve-load.XXXXXX)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# The example config, with its entities declaring the load's agents (load-1 ... load-N,
# analysts of acme like analyst-1: an agent the entities do not declare is denied).
CONFIG="$WORK/skillgate.toml"
python3 - "$WORK" "$AGENTS" <<'PYEOF'
import json, os, sys
work, agents = sys.argv[1], int(sys.argv[2])
entities = json.load(open("examples/entities.json"))
model = next(e for e in entities if e["uid"] == {"type": "Agent", "id": "analyst-1"})
for name in [f"load-{i}" for i in range(1, agents + 1)] + [f"warm-{i}" for i in range(1, 9)]:
    entities.append(dict(model, uid={"type": "Agent", "id": name}))
json.dump(entities, open(os.path.join(work, "entities.json"), "w"))
text = open("examples/skillgate.toml").read()
for name in ("entities", "grants", "catalogue"):
    old = f'{name} = "{name}.json"'
    if old not in text:
        raise SystemExit(f"examples/skillgate.toml has no `{old}`")
    where = work if name == "entities" else os.path.abspath("examples")
    text = text.replace(old, f'{name} = "{where}/{name}.json"')
open(os.path.join(work, "skillgate.toml"), "w").write(text)
PYEOF
STATE="$WORK/state"
key() { "$SG" keys create "$@" --config "$CONFIG" --state-dir "$STATE" | tail -n 1; }
BUILDER_KEY=$(key --builder builder-alice --tenant acme)
# The warm-up and the unloaded runs (220) take turns over 8 keys of their own: under 30
# runs each, the rate-spike detection's least, however long they take.
: >"$WORK/warm-keys"
for i in $(seq 1 8); do key --agent "warm-$i" --tenant acme >>"$WORK/warm-keys"; done
: >"$WORK/agent-keys"
for i in $(seq 1 "$AGENTS"); do key --agent "load-$i" --tenant acme >>"$WORK/agent-keys"; done

mkfifo "$WORK/out"
# The keys' rate limit is lifted so that the admission control (--max-runs, --max-queued,
# --max-queue-wait, --queue-order: their defaults) is what sheds.
# Skills run on the first python3 on the server's PATH (the example config names none):
# the system's real interpreter, as in benches/cli_start.sh, not a version manager's build
# that happens to be first on the caller's PATH.
PATH=/usr/local/bin:/usr/bin:/bin "$SG" serve --config "$CONFIG" --state-dir "$STATE" --listen 127.0.0.1:0 --rate-limit 1000000000 ${SERVE_ARGS:-} >"$WORK/out" 2>"$WORK/server.log" &
SERVER_PID=$!
read -r _ _ ADDR <"$WORK/out"
echo "serve (pid $SERVER_PID) on $ADDR, state $STATE" >&2

tar -czf "$WORK/skill.tar.gz" -C examples/skills analyze-rows
curl -sf -o /dev/null -H "Authorization: Bearer $BUILDER_KEY" -H 'Content-Type: application/gzip' \
  --data-binary @"$WORK/skill.tar.gz" "http://$ADDR/v1/skills"
python3 -c 'import json; print(json.dumps({"input": json.load(open("examples/skills/analyze-rows/sample-input.json"))}))' \
  >"$WORK/body.json"

python3 - "$ADDR" "-" "$WORK" "$STATE" "$SERVER_PID" "$DURATION" "$SOAK" <<'PYEOF'
import csv, http.client, json, os, statistics, subprocess, sys, time

addr, _, work, state, pid, duration, soak = sys.argv[1:8]
load_keys = open(os.path.join(work, "agent-keys")).read().split()
warm_keys = open(os.path.join(work, "warm-keys")).read().split()
host, port = addr.rsplit(":", 1)
path = "/v1/skills/analyze-rows/runs"
body = open(os.path.join(work, "body.json"), "rb").read()
warm_turn = 0  # the warm-up and unloaded runs take turns over warm_keys
ok_runs = 0  # every 2xx run answer, to check against the audit trail

def rss_kib():
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit("no VmRSS for the server")

def audit_since(seen):
    """The execution records after the first `seen`: (their count, {report status: n}).
    A 2xx answer is not always a sandbox run: the monitor's throttle answers an agent past
    its rate with a `denied` report, so the statuses say what the load really ran."""
    time.sleep(0.5)
    recs = []
    with open(os.path.join(state, "audit.jsonl")) as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("kind") == "execution":
                recs.append(rec)
    counts = {}
    for rec in recs[seen:]:
        counts[rec.get("status")] = counts.get(rec.get("status"), 0) + 1
    return len(recs), counts

def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]

def hey_cmd(concurrency, how_long, agent_key):
    return ["hey", "-z", how_long, "-c", str(concurrency), "-m", "POST", "-o", "csv",
            "-H", "Authorization: Bearer " + agent_key, "-T", "application/json",
            "-D", os.path.join(work, "body.json"), f"http://{addr}{path}"]

def seconds(text):
    """A duration as hey takes it (`90s`, `10m`, `1h`) in seconds."""
    units = {"s": 1, "m": 60, "h": 3600}
    if not text or text[-1] not in units:
        raise SystemExit(f"a duration like 30s or 10m, not {text!r}")
    return float(text[:-1]) * units[text[-1]]

def hey(concurrency, how_long, agent_key):
    """Runs hey; returns (seconds, {status: count}, [latency ms of 2xx answers])."""
    out = subprocess.run(hey_cmd(concurrency, how_long, agent_key),
                         check=True, capture_output=True, text=True).stdout
    rows = list(csv.DictReader(out.splitlines()))
    statuses, ok_ms, end = {}, [], 0.0
    for r in rows:
        code = int(r["status-code"])
        statuses[code] = statuses.get(code, 0) + 1
        latency = float(r["response-time"])
        end = max(end, float(r["offset"]) + latency)
        if 200 <= code < 300:
            ok_ms.append(latency * 1000)
    return end, statuses, ok_ms

# Warm-up (the first runs fill the caches: pre-scan verdict, interpreter pages).
conn = http.client.HTTPConnection(host, int(port))
def one():
    global ok_runs, warm_turn
    warm_turn += 1
    t = time.perf_counter()
    conn.request("POST", path, body, {"Authorization": "Bearer " + warm_keys[warm_turn % len(warm_keys)],
                                      "Content-Type": "application/json"})
    resp = conn.getresponse()
    data = resp.read()
    ms = (time.perf_counter() - t) * 1000
    if resp.status != 200:
        raise SystemExit(f"run answered {resp.status}: {data[:300]!r}")
    ok_runs += 1
    report = json.loads(data)
    timing = {}
    for metric in (resp.getheader("Server-Timing") or "").split(","):
        name, _, dur = metric.strip().partition(";dur=")
        if dur:
            timing[name] = float(dur)
    if "pipeline" not in timing or "skill" not in timing:
        raise SystemExit(f"no Server-Timing pipeline and skill in the answer: {resp.getheaders()}")
    report["_timing"] = timing
    if report["status"] != "ok":
        raise SystemExit(f"run status {report['status']}: {data[:300]!r}")
    return ms, report
for _ in range(20):
    one()

rss_start = rss_kib()
# 1. Unloaded, sequential.
seq = [one() for _ in range(200)]
client = [ms for ms, _ in seq]
pipeline = [r["_timing"]["pipeline"] for _, r in seq]
skill = [r["_timing"]["skill"] for _, r in seq]
executor = [next(l["duration_us"] for l in r["layers"] if l["name"] == "executor") / 1000 for _, r in seq]
added = [ms - r["_timing"]["pipeline"] for ms, r in seq]
over_skill = [ms - r["_timing"]["skill"] for ms, r in seq]
over_executor = [ms - s - e for (ms, r), s, e in zip(seq, skill, executor)]
conn.close()
unloaded_p99 = pct(client, 99)
print(f"unloaded, sequential, 200 runs of analyze-rows:")
print(f"  client p50 {pct(client, 50):.2f} ms, p99 {unloaded_p99:.2f} ms")
print(f"  Server-Timing: pipeline p50 {pct(pipeline, 50):.2f} ms, the skill's own run p50 {pct(skill, 50):.2f} ms; "
      f"the executor's own set-up and tear-down (its layer timing) p50 {pct(executor, 50):.2f} ms")
layer_names = [l["name"] for l in seq[0][1]["layers"]]
own = {n: pct([next((l["duration_us"] for l in r["layers"] if l["name"] == n), 0) / 1000 for _, r in seq], 50)
       for n in layer_names}
print("  each layer's own time (its report timing) p50: " + ", ".join(f"{n} {v:.2f} ms" for n, v in own.items()))
print(f"  server's own addition (client time - pipeline, per run) p50 {pct(added, 50):.2f} ms, p99 {pct(added, 99):.2f} ms")
print(f"  all of skillgate over the executor's own run (client time - skill - the executor's set-up and tear-down, per run) "
      f"p50 {pct(over_executor, 50):.2f} ms, p99 {pct(over_executor, 99):.2f} ms")
print(f"  all of skillgate over the skill's own run (client time - skill, per run) p50 {pct(over_skill, 50):.2f} ms, p99 {pct(over_skill, 99):.2f} ms")

seen, _ = audit_since(0)
if soak:
    import threading
    slice_s = seconds(soak) / len(load_keys)
    print(f"soak: concurrency 8 for {soak} in {len(load_keys)} slices of {slice_s:.0f} s, each by the next agent key; RSS every 10 s")
    if slice_s > 60:
        print(f"  warning: slices over a minute: the monitor may throttle an agent (raise --agents)")
    out_paths = [os.path.join(work, f"soak-{i}.csv") for i in range(len(load_keys))]
    def drive():
        # hey writes its CSV at the end: into a file, not a pipe that would fill and stall it.
        for agent_key, out_path in zip(load_keys, out_paths):
            with open(out_path, "w") as out:
                subprocess.run(hey_cmd(8, f"{slice_s:.3f}s", agent_key), stdout=out, check=True)
    driver = threading.Thread(target=drive)
    driver.start()
    samples = []
    while driver.is_alive():
        samples.append(rss_kib())
        driver.join(10)
    rows = []
    for out_path in out_paths:
        with open(out_path) as f:
            rows += list(csv.DictReader(f))
    codes = {}
    for r in rows:
        codes[int(r["status-code"])] = codes.get(int(r["status-code"]), 0) + 1
    ok_runs += sum(n for c, n in codes.items() if 200 <= c < 300)
    base = samples[min(3, len(samples) - 1)]  # after 30 s of warm-up
    growth = (samples[-1] - base) / base * 100
    print(f"  {len(rows)} requests, HTTP statuses {codes}")
    seen, reports = audit_since(seen)
    print(f"  report statuses (audit trail): {reports}")
    print(f"  RSS KiB: start {samples[0]}, after warm-up {base}, max {max(samples)}, end {samples[-1]}: growth {growth:+.1f}% (target < 10%)")
else:
    print(f"hey, {duration} per level (p50/p99 of admitted 2xx answers):")
    print(f"  {'conc':>4} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'p99/unloaded':>12} {'2xx':>6} {'429':>6} other")
    for i, c in enumerate((1, 8, 32, 128)):
        secs, codes, ok_ms = hey(c, duration, load_keys[i % len(load_keys)])
        n_ok = len(ok_ms)
        ok_runs += n_ok
        other = {k: v for k, v in codes.items() if not (200 <= k < 300) and k != 429}
        p50 = pct(ok_ms, 50) if ok_ms else float("nan")
        p99 = pct(ok_ms, 99) if ok_ms else float("nan")
        seen, reports = audit_since(seen)
        print(f"  {c:>4} {n_ok / secs:>8.1f} {p50:>8.2f} {p99:>8.2f} {p99 / unloaded_p99:>11.1f}x {n_ok:>6} {codes.get(429, 0):>6} {other or ''} reports {reports}")

print(f"server RSS: {rss_start} KiB before the load, {rss_kib()} KiB after")

# 3. Exactly one audit record per accepted run.
time.sleep(1)
ids = []
with open(os.path.join(state, "audit.jsonl")) as f:
    for line in f:
        rec = json.loads(line)
        if rec.get("kind") == "execution":
            ids.append(rec["request_id"])
dupes = len(ids) - len(set(ids))
verdict = "OK" if len(ids) == ok_runs and dupes == 0 else "MISMATCH"
print(f"audit: {len(ids)} execution records, {ok_runs} 2xx run answers, {dupes} request ids twice: {verdict}")
if verdict != "OK":
    sys.exit(1)
PYEOF
