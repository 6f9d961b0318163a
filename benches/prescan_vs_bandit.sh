#!/usr/bin/env bash
# Times the skillgate pre-scan and Bandit on the same Python files in the same run and
# prints the ratio. Bandit is installed into the repository's .venv (pip) if missing.
#
# Usage: benches/prescan_vs_bandit.sh [DIR] [ROUNDS]
#   DIR     Python files to scan (default corpora/prescan/python, else the crate's samples)
#   ROUNDS  timed rounds per tool, best kept (default 5)
#   SKILLGATE=PATH  use this skillgate binary instead of building one
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DIR=${1:-corpora/prescan/python}
[ -d "$DIR" ] || DIR=crates/skillgate-prescan/tests/corpus/python
ROUNDS=${2:-5}

if [ ! -x .venv/bin/bandit ]; then
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check bandit
fi
# SKILLGATE=/path/to/skillgate compares a given build (e.g. main's) instead of building.
if [ -z "${SKILLGATE:-}" ]; then
  cargo build --quiet --release -p skillgate-cli
  SKILLGATE=$ROOT/target/release/skillgate
fi

python3 - "$SKILLGATE" "$ROOT/.venv/bin/bandit" "$DIR" "$ROUNDS" <<'PY'
import pathlib, statistics, subprocess, sys, time

skillgate, bandit, root, rounds = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3]), int(sys.argv[4])
files = sorted(str(p) for p in root.rglob("*.py") if "__pycache__" not in p.parts)
size = sum(pathlib.Path(f).stat().st_size for f in files)
if not files:
    sys.exit(f"no .py files under {root}")

def best(cmd):
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        # Both tools exit non-zero when they find something; that is expected here.
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times)

sg = best([skillgate, "scan", "code", "--format", "json", *files])
bd = best([bandit, "-q", "-f", "json", *files])
print(f"files: {len(files)} Python files, {size / 1024:.1f} KiB, from {root}")
print(f"skillgate scan code : best {sg[0] * 1e3:8.1f} ms  median {sg[1] * 1e3:8.1f} ms  ({sg[0] / len(files) * 1e6:7.0f} us/file, process start included)")
print(f"bandit              : best {bd[0] * 1e3:8.1f} ms  median {bd[1] * 1e3:8.1f} ms  ({bd[0] / len(files) * 1e6:7.0f} us/file, process start included)")
print(f"ratio (bandit / skillgate, best of {rounds}): {bd[0] / sg[0]:.1f}x")
PY
