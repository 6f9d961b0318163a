#!/usr/bin/env bash
# Per-run latency of one skill on every executor, through `skillgate run` and through the
# engine's own round trip, in one run, with the ratios:
#
#   skillgate native      the native sandbox            (reference: nothing to compare)
#   skillgate oci-runc    [executor] kind = "oci"        vs  bare `runc run --bundle`
#   skillgate oci-runsc   ... runtime = "runsc"          vs  bare `runsc run --bundle`
#   skillgate docker      [executor] kind = "docker"     vs  `docker run --rm -i`
#   skillgate podman      ... on Podman's service        vs  `podman --remote run --rm -i`
#
#   serve NAME            a request to `skillgate serve` on that executor (POST /v1/runs)
#   docker API / podman API   the engine's raw API round trip, made in this script's own
#                         process (create, start, wait, logs, delete over the unix
#                         socket): no client process to start, no attach
#
# The skill is the same everywhere: `python` runtime's interpreter, JSON in, JSON out.
# `skillgate run` is the whole command as a user runs it (process start, config, the
# seven layers with the example config's policies, the monitor's state), so its overhead
# over the raw round trip is everything skillgate adds. A request to `serve` (one server
# per executor, started here, its pipeline built once) is what a platform calling
# skillgate over HTTP pays. The raw contenders run the same image or root (the runtime's
# exported layer), as uid 1000, with no network and a read-only root, but without
# skillgate's seccomp profile, limits and /out collection; the raw API round trip gets
# the input inside the code instead of on an attached stdin.
# The issue's target: skillgate's overhead over the raw round trip is at most 10%.
#
# Usage: [SKILLGATE=BIN] benches/executors.sh [RUNS]   (root; runc, runsc, docker.io, podman: the engines
# are started with scripts/services, on their own sockets, and stopped when this started
# them). Not a test: it prints figures. Several minutes with the default 10 runs each.
set -euo pipefail
RUNS="${1:-10}"
cd "$(dirname "$0")/.."
REPO=$PWD
# SKILLGATE=path runs that binary instead of building the release one.
SG="${SKILLGATE:-}"
if [ -z "$SG" ]; then
  cargo build -q --release -p skillgate-cli
  SG="${CARGO_TARGET_DIR:-target}/release/skillgate"
fi
SG=$(realpath "$SG")
echo "skillgate: $SG" >&2
WORK=$(mktemp -d /tmp/skillgate-bench-executors.XXXXXX)
STARTED=()
SERVERS=()
cleanup() {
  for pid in "${SERVERS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  for s in "${STARTED[@]}"; do scripts/services down "$s" >/dev/null 2>&1 || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# The engines: started here only when they are not running already (and then stopped).
declare -A SECTION
for s in docker podman; do
  if ! scripts/services status "$s" >/dev/null 2>&1; then STARTED+=("$s"); fi
  SECTION[$s]=$(scripts/services up "$s")
done
sock() { sed -n 's/^socket = "\(.*\)"/\1/p' <<<"$1"; }
DOCKER_SOCK=$(sock "${SECTION[docker]}")
PODMAN_SOCK=$(sock "${SECTION[podman]}")

# One config per contender: the example config (its policies, entities, grants,
# catalogue), its runtimes in this work folder, Python skills on the `python` runtime.
for f in entities.json grants.json catalogue.json; do cp "examples/$f" "$WORK/$f"; done
write_config() { # NAME EXECUTOR_SECTION
  python3 - "$WORK" "$1" "$2" <<'PYEOF'
import re, sys
work, name, section = sys.argv[1:]
text = open("examples/skillgate.toml").read()
text = re.sub(r'\[executor\]\nkind = "native"[^\n]*\n', section.rstrip("\n") + "\n", text, count=1)
text = text.replace("[runtimes]\n", f'[runtimes]\ndir = "{work}/runtimes"\npython = "python"\n', 1)
open(f"{work}/{name}.toml", "w").write(text)
PYEOF
}
write_config native $'[executor]\nkind = "native"'
write_config oci-runc $'[executor]\nkind = "oci"\nruntime = "runc"\nstate_root = "'"$WORK"'/oci"'
write_config oci-runsc $'[executor]\nkind = "oci"\nruntime = "runsc"\nstate_root = "'"$WORK"'/oci"'
write_config docker "${SECTION[docker]}"
write_config podman "${SECTION[podman]}"
"$SG" runtime install python --offline --config "$WORK/native.toml" >/dev/null

# The runtime's image: its exported layer, imported into both engines (as the docker
# executor names it) and unpacked as the bare runtimes' root.
"$SG" runtime export python --format oci-archive -o "$WORK/python.oci.tar" --config "$WORK/native.toml" >/dev/null
mkdir -p "$WORK/layout" "$WORK/bundle/rootfs"
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
tar -C "$WORK/bundle/rootfs" -xf "$LAYER"
IMAGE=skillgate-runtime-python:latest
docker -H "unix://$DOCKER_SOCK" import "$LAYER" "$IMAGE" >/dev/null
podman --remote --url "unix://$PODMAN_SOCK" import "$LAYER" "$IMAGE" >/dev/null

SKILL="$WORK/skill.py"
printf 'import json,sys\nd=json.load(sys.stdin)\nprint(json.dumps({"sum": sum(d["n"])}))\n' >"$SKILL"
CODE=$(cat "$SKILL")
# The bare runtimes' bundle: the same root read-only, uid 1000, no terminal, the skill
# as an argument, a new network namespace (runc's default spec has one).
( cd "$WORK/bundle" && runc spec )
python3 - "$WORK/bundle/config.json" "$CODE" <<'PYEOF'
import json, sys
path, code = sys.argv[1:]
c = json.load(open(path))
c["process"].update(terminal=False, user={"uid": 1000, "gid": 1000}, cwd="/tmp",
                    args=["/runtime/bin/python3", "-I", "-c", code])
c["root"]["readonly"] = True
c["mounts"].append({"destination": "/tmp", "type": "tmpfs", "source": "tmpfs", "options": ["mode=1777"]})
json.dump(c, open(path, "w"))
PYEOF

# One `skillgate serve` per container executor, each with its own state and an agent key.
: >"$WORK/servers"
for name in oci-runc oci-runsc docker podman; do
  key=$("$SG" keys create --agent analyst-1 --tenant acme --config "$WORK/$name.toml" \
    --state-dir "$WORK/serve-$name" | tail -n 1)
  mkfifo "$WORK/listen-$name"
  "$SG" serve --config "$WORK/$name.toml" --state-dir "$WORK/serve-$name" --listen 127.0.0.1:0 \
    --rate-limit 1000000000 >"$WORK/listen-$name" 2>"$WORK/serve-$name.log" &
  SERVERS+=($!)
  read -r _ _ addr <"$WORK/listen-$name"
  echo "$name $addr $key" >>"$WORK/servers"
done

python3 - "$RUNS" "$WORK" "$SG" "$SKILL" "$CODE" "$DOCKER_SOCK" "$PODMAN_SOCK" "$IMAGE" <<'PYEOF'
import http.client, json, socket, statistics, subprocess, sys, time, uuid
runs, work, sg, skill, code, dsock, psock, image = sys.argv[1:]
runs = int(runs)
stdin = b'{"n": [1, 2, 3]}'
want = {"sum": 6}

def skillgate(name):
    return lambda: [sg, "run", "--code", skill, "--lang", "python", "--input", stdin.decode(),
                    "--config", f"{work}/{name}.toml", "--agent", "analyst-1", "--tenant", "acme",
                    "--format", "json", "--state-dir", f"{work}/state-{name}"]

def bare(runtime, extra=()):
    def cmd():
        return [runtime, "--root", f"{work}/bare-{runtime}", *extra, "run", "--bundle",
                f"{work}/bundle", f"bench-{uuid.uuid4().hex[:12]}"]
    return cmd

def engine_run(prefix):
    return lambda: [*prefix, "run", "--rm", "-i", "--network", "none", "--read-only",
                    "--user", "1000:1000", image, "/runtime/bin/python3", "-I", "-c", code]

class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost")
        self.path = path
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)

def api(sock, method, path, body=None):
    c = UnixHTTP(sock)
    c.request(method, path, None if body is None else json.dumps(body),
              {"Content-Type": "application/json"})
    r = c.getresponse()
    data = r.read()
    c.close()
    if r.status >= 300:
        raise SystemExit(f"{method} {path}: {r.status} {data[:300]!r}")
    return data

def demux(data):
    out, i = b"", 0
    while i + 8 <= len(data):
        n = int.from_bytes(data[i + 4:i + 8], "big")
        if data[i] == 1:
            out += data[i + 8:i + 8 + n]
        i += 8 + n
    return out

inline = code.replace("json.load(sys.stdin)", "json.loads(" + repr(stdin.decode()) + ")")
def raw_api(sock):
    def run():
        created = json.loads(api(sock, "POST", "/containers/create", {
            "Image": image, "Cmd": ["/runtime/bin/python3", "-I", "-c", inline],
            "User": "1000:1000", "NetworkDisabled": True,
            "HostConfig": {"NetworkMode": "none", "ReadonlyRootfs": True}}))
        cid = created["Id"]
        api(sock, "POST", f"/containers/{cid}/start")
        api(sock, "POST", f"/containers/{cid}/wait")
        logs = api(sock, "GET", f"/containers/{cid}/logs?stdout=1&stderr=1")
        api(sock, "DELETE", f"/containers/{cid}?force=1")
        return demux(logs)
    return run

servers = {}
for line in open(f"{work}/servers"):
    name, addr, key = line.split()
    servers[name] = (addr, key)

def serve(name):
    addr, key = servers[name]
    host, port = addr.rsplit(":", 1)
    body = json.dumps({"language": "python", "code": code, "input": json.loads(stdin)})
    def run():
        c = http.client.HTTPConnection(host, int(port))
        c.request("POST", "/v1/runs", body, {"Authorization": "Bearer " + key,
                                              "Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
        c.close()
        if r.status != 200:
            raise SystemExit(f"serve {name}: {r.status} {data[:500]!r}")
        return data
    return run

contenders = {
    "skillgate native": skillgate("native"),
    "skillgate oci-runc": skillgate("oci-runc"),
    "bare runc run": bare("runc"),
    "skillgate oci-runsc": skillgate("oci-runsc"),
    "bare runsc run": bare("runsc", ["--network=none", "--platform=ptrace"]),
    "skillgate docker": skillgate("docker"),
    "docker run --rm": engine_run(["docker", "-H", f"unix://{dsock}"]),
    "skillgate podman": skillgate("podman"),
    "podman run --rm": engine_run(["podman", "--remote", "--url", f"unix://{psock}"]),
    "serve oci-runc": serve("oci-runc"),
    "serve oci-runsc": serve("oci-runsc"),
    "serve docker": serve("docker"),
    "docker API": raw_api(dsock),
    "serve podman": serve("podman"),
    "podman API": raw_api(psock),
}

def answer(name, out):
    if name.startswith("skillgate") or name.startswith("serve"):
        report = json.loads(out)
        if report["status"] != "ok":
            raise SystemExit(f"{name}: {report['status']}: {report['findings']}")
        out = report["stdout"].encode()
    return json.loads(out)

times = {name: [] for name in contenders}
for i in range(runs + 1):  # the first round warms caches and is not counted
    for name, cmd in contenders.items():
        if name.startswith("serve") or name.endswith("API"):
            start = time.perf_counter()
            out = cmd()
            elapsed = time.perf_counter() - start
            if answer(name, out) != want:
                raise SystemExit(f"{name} failed: {out[-500:]!r}")
        else:
            start = time.perf_counter()
            p = subprocess.run(cmd(), input=stdin, capture_output=True)
            elapsed = time.perf_counter() - start
            if p.returncode != 0 or answer(name, p.stdout) != want:
                raise SystemExit(f"{name} failed ({p.returncode}): {p.stdout[-500:]!r} {p.stderr[-500:]!r}")
        if i:
            times[name].append(elapsed * 1000)

med = {n: statistics.median(t) for n, t in times.items()}
print(f"median of {runs} runs each (ms), one skill, JSON in and out:")
for n, m in med.items():
    print(f"  {n:22} {m:8.1f}   (min {min(times[n]):.1f}, max {max(times[n]):.1f})")
print("skillgate over the raw round trip:")
for sgname, raw in [("skillgate oci-runc", "bare runc run"), ("serve oci-runc", "bare runc run"),
                    ("skillgate oci-runsc", "bare runsc run"), ("serve oci-runsc", "bare runsc run"),
                    ("skillgate docker", "docker run --rm"), ("skillgate docker", "docker API"),
                    ("serve docker", "docker API"),
                    ("skillgate podman", "podman run --rm"), ("skillgate podman", "podman API"),
                    ("serve podman", "podman API")]:
    ratio = med[sgname] / med[raw]
    print(f"  {sgname:20} / {raw:16} = {ratio:5.2f}  ({(ratio - 1) * 100:+.0f}%, "
          f"{med[sgname] - med[raw]:+.1f} ms; target <= +10%)")
PYEOF
