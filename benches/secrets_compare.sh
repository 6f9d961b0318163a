#!/usr/bin/env bash
# Side-by-side comparison of output secret scanners on ONE generated corpus, in ONE run:
# skillgate (`skillgate scan output`), Kingfisher (pip kingfisher-bin), ripsecrets
# (cargo install ripsecrets) and detect-secrets (pip).
#
# The corpus is the benign corpus (corpora/secrets/benign: JSON logs, pandas tables,
# tracebacks, base64 PNG charts, hashes, UUIDs, minified JS) repeated to SIZE_MB, with
# PLANTED secrets of common kinds (AWS, GitHub, GitLab, Slack, Stripe, OpenAI, Anthropic,
# Google, private keys, JWTs, database URLs) planted one per line at known lines.
# For each tool it prints: seconds, MB/s, throughput relative to skillgate, recall on
# the planted secrets (a planted secret counts as found when the tool reports its line),
# and the number of other reported lines (false positives on the benign text).
#
# Usage: benches/secrets_compare.sh            (SIZE_MB=16 PLANTED=240 by default)
#        SIZE_MB=64 PLANTED=500 benches/secrets_compare.sh
# Every tool runs single-threaded where it has the option (kingfisher --jobs 1).
# detect-secrets is stopped after DS_LIMIT seconds (default 300).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SIZE_MB="${SIZE_MB:-16}"
PLANTED="${PLANTED:-240}"
VENV="$ROOT/.venv"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

if [ ! -x "$VENV/bin/pip" ]; then python3 -m venv "$VENV"; fi
[ -x "$VENV/bin/kingfisher" ] || "$VENV/bin/pip" install -q kingfisher-bin
[ -x "$VENV/bin/detect-secrets" ] || "$VENV/bin/pip" install -q detect-secrets
if [ ! -x "$VENV/bin/ripsecrets" ]; then
  cargo install -q --root "$VENV" ripsecrets || echo "note: ripsecrets did not install; skipped" >&2
fi
(cd "$ROOT" && cargo build -q --release -p skillgate-cli)

export ROOT WORK SIZE_MB PLANTED VENV
"$VENV/bin/python" - <<'PY'
import base64, json, os, random, re, string, subprocess, sys, time
root, work, venv = os.environ["ROOT"], os.environ["WORK"], os.environ["VENV"]
size = int(os.environ["SIZE_MB"]) << 20
planted_n = int(os.environ["PLANTED"])
R = random.Random(20261130)
A = string.ascii_letters + string.digits
def rs(n, alpha=A): return "".join(R.choice(alpha) for _ in range(n))
URL = A + "_-"; B32 = string.ascii_uppercase + "234567"; HEX = "0123456789abcdef"; DIG = string.digits
def pem():
    body = base64.b64encode(bytes(R.randrange(256) for _ in range(1190))).decode()
    return "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(body[i:i+64] for i in range(0, len(body), 64)) + "\n-----END RSA PRIVATE KEY-----"
def b64u(s): return base64.urlsafe_b64encode(s.encode()).decode().rstrip("=")
KINDS = {
  "aws": lambda: f"export AWS_ACCESS_KEY_ID=AKIA{rs(16,B32)} AWS_SECRET_ACCESS_KEY={rs(40, A+'+/')}",
  "github": lambda: f"GITHUB_TOKEN=ghp_{rs(36)}",
  "gitlab": lambda: f'"gitlab_token": "glpat-{rs(20,URL)}"',
  "slack": lambda: f"slack bot token xoxb-{rs(12,DIG)}-{rs(13,DIG)}-{rs(24)}",
  "stripe": lambda: f"stripe.api_key = 'sk_live_{rs(24)}'",
  "openai": lambda: f"OPENAI_API_KEY=sk-proj-{rs(74,URL)}T3BlbkFJ{rs(74,URL)}",
  "anthropic": lambda: f"ANTHROPIC_API_KEY=sk-ant-api03-{rs(93,URL)}AA",
  "google": lambda: f"maps key: AIza{rs(35,URL)}",
  "private-key": pem,
  "jwt": lambda: "Authorization: Bearer " + b64u('{"alg":"HS256","typ":"JWT"}') + "." + b64u(json.dumps({"sub": rs(8), "iat": 1716239022})) + "." + rs(43, URL),
  "postgres-url": lambda: f"DATABASE_URL=postgres://app:{rs(16)}@db.internal:5432/app",
  "slack-webhook": lambda: f"https://hooks.slack.com/services/T{rs(8,B32)}/B{rs(10,B32)}/{rs(24)}",
}
bdir = os.path.join(root, "corpora/secrets/benign")
benign = b"".join(open(os.path.join(bdir, f), "rb").read() for f in sorted(os.listdir(bdir)))
blines = benign.split(b"\n")
out, planted, line = [], [], 1
every = max(1, (size // max(1, len(benign) // len(blines))) // (planted_n + 1))
i = 0; total = 0
kinds = sorted(KINDS)
while total < size:
    l = blines[i % len(blines)]; i += 1
    out.append(l); total += len(l) + 1; line += 1
    if i % every == 0 and len(planted) < planted_n:
        kind = kinds[len(planted) % len(kinds)]
        s = KINDS[kind]()
        planted.append((line, kind))
        out.append(s.encode()); total += len(s) + 1; line += 1 + s.count("\n")
corpus = os.path.join(work, "corpus.txt")
open(corpus, "wb").write(b"\n".join(out) + b"\n")
mb = os.path.getsize(corpus) / 1e6
plines = {l for l, _ in planted}

def run(cmd, **kw):
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, **kw)
    return time.perf_counter() - t, p

def sg():
    t, p = run([os.path.join(root, "target/release/skillgate"), "scan", "output", "--format", "json", corpus])
    return t, {f["line"] for f in json.loads(p.stdout)["findings"]}
def kf():
    kfb = os.path.join(venv, "bin/kingfisher")
    small = os.path.join(work, "warm.txt"); open(small, "w").write("warm up\n")
    run([kfb, "scan", small, "-n", "--no-update-check", "-j", "1"])  # builds its rule cache
    t, p = run([kfb, "scan", corpus, "-n", "-f", "json", "--no-update-check", "-j", "1"])
    first = p.stdout.decode().split("\n", 1)[0]
    return t, {f["finding"]["line"] for f in json.loads(first)["findings"]}
def rip():
    t, p = run([os.path.join(venv, "bin/ripsecrets"), corpus])
    lines = set()
    for l in re.sub(r"\x1b\[[0-9;]*m", "", p.stdout.decode(errors="replace")).splitlines():
        m = re.match(r"^.*?:(\d+):", l)
        if m: lines.add(int(m.group(1)))
    return t, lines
DS_LIMIT = int(os.environ.get("DS_LIMIT", "300"))
def ds():
    # detect-secrets runs every plugin on every line in Python: minutes on large corpora.
    try:
        t, p = run([os.path.join(venv, "bin/detect-secrets"), "scan", corpus], cwd=work,
                   timeout=DS_LIMIT)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"did not finish within DS_LIMIT={DS_LIMIT} s")
    res = json.loads(p.stdout)["results"]
    return t, {f["line_number"] for fs in res.values() for f in fs}

tools = [("skillgate", sg), ("kingfisher", kf), ("ripsecrets", rip), ("detect-secrets", ds)]
print(f"corpus: {mb:.1f} MB, {len(planted)} planted secrets of {len(kinds)} kinds")
print(f"{'tool':<15}{'seconds':>9}{'MB/s':>10}{'vs skillgate':>14}{'recall':>9}{'other lines':>13}")
base = None
per_kind = {}
for name, fn in tools:
    try:
        t, lines = fn()
    except Exception as e:  # a tool that is missing or fails is reported, not fatal
        print(f"{name:<15} failed: {e}")
        continue
    base = base or t
    found = plines & lines
    per_kind[name] = {k: sum(1 for l, kk in planted if kk == k and l in lines) for k in kinds}
    print(f"{name:<15}{t:>9.2f}{mb / t:>10.1f}{base / t:>13.2f}x{len(found) / len(planted):>9.1%}{len(lines - plines):>13}")
print("\nrecall by kind (found / planted):")
per = {k: sum(1 for _, kk in planted if kk == k) for k in kinds}
print(f"{'kind':<15}" + "".join(f"{n:>16}" for n in per_kind))
for k in kinds:
    print(f"{k:<15}" + "".join(f"{per_kind[n][k]:>13}/{per[k]:<2}" for n in per_kind))
PY
