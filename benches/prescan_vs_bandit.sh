#!/usr/bin/env bash
# Times the skillgate pre-scan and Bandit on the same Python files in the same run and
# prints the ratio of their CPU time (user + system of the process and its threads, what
# each costs a machine; wall time is printed too). Bandit is installed into the
# repository's .venv (pip) if missing.
#
# Usage: benches/prescan_vs_bandit.sh [DIR] [ROUNDS]
#   DIR     Python files to scan; by default 200 files of 300 lines made from
#           corpora/prescan/bench/skill_300_lines.py, each with a line of its own (so no
#           two are the same bytes)
#   ROUNDS  timed rounds per tool, best kept (default 5)
#   SKILLGATE=PATH    use this skillgate binary (`scan code --format json FILES`)
#   PRESCAN_ENGINE=1  time the pre-scan engine alone (skillgate-prescan's example
#                     scan_files: the built-in packs and scan_all, as `scan code` runs them)
#                     instead of building the whole CLI in release
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ROUNDS=${2:-5}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
if [ -n "${1:-}" ]; then
  DIR=$1
else
  DIR=$TMP/files
  mkdir -p "$DIR"
  for i in $(seq -w 1 200); do
    { echo "# file $i"; head -n 299 corpora/prescan/bench/skill_300_lines.py; } > "$DIR/skill_$i.py"
  done
fi

if [ ! -x .venv/bin/bandit ]; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check bandit
fi
if [ -n "${SKILLGATE:-}" ]; then
  CMD=("$SKILLGATE" scan code --format json)
elif [ "${PRESCAN_ENGINE:-}" = 1 ]; then
  cargo build --quiet --release -p skillgate-prescan --example scan_files
  CMD=("${CARGO_TARGET_DIR:-$ROOT/target}/release/examples/scan_files")
else
  cargo build --quiet --release -p skillgate-cli
  CMD=("${CARGO_TARGET_DIR:-$ROOT/target}/release/skillgate" scan code --format json)
fi

python3 - "$ROOT/.venv/bin/bandit" "$DIR" "$ROUNDS" "${CMD[@]}" <<'PY'
import os, pathlib, statistics, subprocess, sys, time

bandit, root, rounds, skillgate = sys.argv[1], pathlib.Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
files = sorted(str(p) for p in root.rglob("*.py") if "__pycache__" not in p.parts)
if not files:
    sys.exit(f"no .py files under {root}")
size = sum(pathlib.Path(f).stat().st_size for f in files)
lines = sum(pathlib.Path(f).read_text(errors="replace").count("\n") for f in files)

def run(cmd):
    """Wall and CPU seconds of one run (CPU: user + system of the child, all threads)."""
    t = time.perf_counter()
    # Both tools exit non-zero when they find something; that is expected here.
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _, ru = os.wait4(p.pid, 0)
    return time.perf_counter() - t, ru.ru_utime + ru.ru_stime

def best(cmd):
    runs = [run(cmd) for _ in range(rounds)]
    cpu = sorted(c for _, c in runs)
    wall = sorted(w for w, _ in runs)
    return cpu[0], statistics.median(cpu), wall[0]

sg = best(skillgate + files)
bd = best([bandit, "-q", "-f", "json", *files])
print(f"files: {len(files)} Python files, {lines} lines, {size / 1024:.1f} KiB, from {root}")
print(f"skillgate pre-scan ({pathlib.Path(skillgate[0]).name}): CPU best {sg[0] * 1e3:8.1f} ms  median {sg[1] * 1e3:8.1f} ms  ({sg[0] / len(files) * 1e6:6.0f} us/file)  wall best {sg[2] * 1e3:8.1f} ms")
print(f"bandit                          : CPU best {bd[0] * 1e3:8.1f} ms  median {bd[1] * 1e3:8.1f} ms  ({bd[0] / len(files) * 1e6:6.0f} us/file)  wall best {bd[2] * 1e3:8.1f} ms")
print(f"ratio (bandit / skillgate CPU time, best of {rounds}): {bd[0] / sg[0]:.1f}x (median {bd[1] / sg[1]:.1f}x)")
PY
