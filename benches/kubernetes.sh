#!/usr/bin/env bash
# Pod per run: the latency of one skill through `skillgate run` on the Kubernetes executor
# (create -> output -> delete, the whole command a user runs), against the native sandbox
# and Docker Engine through the same command, and against `kubectl run --rm -i` (the
# cluster's own round trip for a pod with stdin, on the same image), interleaved, in one
# run; then the throughput of pods at concurrency 1, 4 and 16 (that many `skillgate run`
# processes at once, each one pod).
#
# The skill is the same everywhere: the `python` runtime's interpreter, JSON in, JSON out,
# with the example config's policies. The cluster and the engine are started with
# scripts/services (and stopped again when this script started them).
#
# Usage: [SKILLGATE=BIN] benches/kubernetes.sh [RUNS] [THROUGHPUT_RUNS]
# (root; RUNS per contender, default 10; THROUGHPUT_RUNS per concurrency, default 32).
# Not a test: it prints figures.
set -euo pipefail
RUNS="${1:-10}"
TRUNS="${2:-32}"
cd "$(dirname "$0")/.."
SG="${SKILLGATE:-}"
if [ -z "$SG" ]; then
  cargo build -q --release -p skillgate-cli
  SG="${CARGO_TARGET_DIR:-target}/release/skillgate"
fi
SG=$(realpath "$SG")
echo "skillgate: $SG" >&2
WORK=$(mktemp -d /tmp/skillgate-bench-k8s.XXXXXX)
STARTED=()
cleanup() {
  for s in "${STARTED[@]}"; do scripts/services down "$s" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

declare -A SECTION
for s in k8s docker; do
  if ! scripts/services status "$s" >/dev/null 2>&1; then STARTED+=("$s"); fi
  SECTION[$s]=$(scripts/services up "$s")
done
DOCKER_SOCK=$(sed -n 's/^socket = "\(.*\)"/\1/p' <<<"${SECTION[docker]}")
KUBECONFIG_FILE=$(sed -n 's/^kubeconfig = "\(.*\)"/\1/p' <<<"${SECTION[k8s]}")

for f in entities.json grants.json catalogue.json; do cp "examples/$f" "$WORK/$f"; done
write_config() { # NAME EXECUTOR_SECTION
  python3 - "$WORK" "$1" "$2" <<'PYEOF'
import sys
work, name, section = sys.argv[1:]
text = open("examples/skillgate.toml").read()
assert '[executor]\nkind = "native"' in text, "examples/skillgate.toml has [executor] kind = \"native\""
new = text.replace('[executor]\nkind = "native"', section.rstrip("\n"), 1)
new = new.replace("[runtimes]\n", f'[runtimes]\ndir = "{work}/runtimes"\npython = "python"\n', 1)
open(f"{work}/{name}.toml", "w").write(new)
PYEOF
}
write_config native $'[executor]\nkind = "native"'
write_config docker "${SECTION[docker]}"
write_config k8s "${SECTION[k8s]}"
"$SG" runtime install python --offline --config "$WORK/native.toml" >/dev/null
"$SG" runtime export python --format oci-archive -o "$WORK/python.oci.tar" --config "$WORK/native.toml" >/dev/null
IMAGE=skillgate-runtime-python:latest
scripts/services load k8s "$WORK/python.oci.tar" "$IMAGE" >/dev/null
mkdir -p "$WORK/layout"
tar -C "$WORK/layout" -xf "$WORK/python.oci.tar"
LAYER=$(python3 - "$WORK/layout" <<'PYEOF'
import json, sys
d = sys.argv[1]
blob = lambda digest: f"{d}/blobs/sha256/{digest.split(':')[1]}"
index = json.load(open(f"{d}/index.json"))
manifest = json.load(open(blob(index["manifests"][0]["digest"])))
print(blob(manifest["layers"][0]["digest"]))
PYEOF
)
docker -H "unix://$DOCKER_SOCK" import "$LAYER" "$IMAGE" >/dev/null
rm -rf "$WORK/layout"

SKILL="$WORK/skill.py"
printf 'import json,sys\nd=json.load(sys.stdin)\nprint(json.dumps({"sum": sum(d["n"])}))\n' >"$SKILL"

python3 - "$RUNS" "$TRUNS" "$WORK" "$SG" "$SKILL" "$KUBECONFIG_FILE" "$IMAGE" <<'PYEOF'
import concurrent.futures, json, statistics, subprocess, sys, time, uuid
runs, truns, work, sg, skill, kubeconfig, image = sys.argv[1:]
runs, truns = int(runs), int(truns)
stdin = b'{"n": [1, 2, 3]}'
want = {"sum": 6}
code = open(skill).read()

def skillgate(name):
    return lambda: [sg, "run", "--code", skill, "--lang", "python", "--input", stdin.decode(),
                    "--config", f"{work}/{name}.toml", "--agent", "analyst-1", "--tenant", "acme",
                    "--format", "json", "--state-dir", f"{work}/state-{name}-{uuid.uuid4().hex[:8]}"]

def kubectl_run():
    name = f"bench-{uuid.uuid4().hex[:10]}"
    return ["kubectl", "--kubeconfig", kubeconfig, "-n", "skillgate", "run", name, "--rm", "-i",
            "--quiet", "--restart=Never", f"--image={image}", "--image-pull-policy=Never",
            "--command", "--", "/runtime/bin/python3", "-I", "-c", code]

contenders = {
    "skillgate kubernetes": skillgate("k8s"),
    "kubectl run --rm -i": kubectl_run,
    "skillgate docker": skillgate("docker"),
    "skillgate native": skillgate("native"),
}

def answer(name, out):
    if name.startswith("skillgate"):
        report = json.loads(out)
        if report["status"] != "ok":
            raise SystemExit(f"{name}: {report['status']}: {report['findings']}")
        out = report["stdout"].encode()
    return json.loads(out)

def once(name, cmd):
    start = time.perf_counter()
    p = subprocess.run(cmd(), input=stdin, capture_output=True)
    elapsed = time.perf_counter() - start
    if p.returncode != 0 or answer(name, p.stdout) != want:
        raise SystemExit(f"{name} failed ({p.returncode}): {p.stdout[-500:]!r} {p.stderr[-500:]!r}")
    return elapsed * 1000

times = {name: [] for name in contenders}
for i in range(runs + 1):  # the first round warms caches and is not counted
    for name, cmd in contenders.items():
        t = once(name, cmd)
        if i:
            times[name].append(t)
med = {n: statistics.median(t) for n, t in times.items()}
print(f"pod per run: median of {runs} runs each (ms), one skill, JSON in and out, interleaved:")
for n, m in med.items():
    print(f"  {n:22} {m:8.1f}   (min {min(times[n]):.1f}, max {max(times[n]):.1f})")
k = med["skillgate kubernetes"]
for other in ["kubectl run --rm -i", "skillgate docker", "skillgate native"]:
    print(f"  skillgate kubernetes / {other:20} = {k / med[other]:5.2f}  ({k - med[other]:+.1f} ms)")

print(f"throughput on the one-node cluster, {truns} runs at each concurrency:")
for c in (1, 4, 16):
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(c) as pool:
        lat = list(pool.map(lambda _: once("skillgate kubernetes", contenders["skillgate kubernetes"]),
                            range(truns)))
    wall = time.perf_counter() - start
    print(f"  concurrency {c:2}: {truns / wall:5.2f} runs/s, median latency {statistics.median(lat):7.1f} ms "
          f"(max {max(lat):.1f})")
PYEOF
