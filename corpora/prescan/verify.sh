#!/usr/bin/env bash
# Checks the pre-scan corpora: every Python file compiles, every JavaScript file parses,
# every file carries its header line, and every benign skill runs on its `sample-input`
# and prints one JSON document. Usage: corpora/prescan/verify.sh [PYTHON]
# PYTHON defaults to python3; it needs pandas, numpy and matplotlib for the benign files.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py="${1:-python3}"
fail=0
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

for f in "$here"/python/*/*.py "$here"/bench/*.py; do
  "$py" - "$f" <<'PY' || { echo "FAIL compile: $f"; fail=1; }
import sys
src = open(sys.argv[1], "rb").read()
compile(src, sys.argv[1], "exec")  # honours the file's coding declaration, like py_compile
PY
done
for f in "$here"/javascript/*/*.js; do
  node --check "$f" || { echo "FAIL parse: $f"; fail=1; }
done

check_header() { # file, comment prefix, kind
  local first; first="$(head -n 1 "$1")"
  case "$3" in
    malicious) [[ "$first" =~ ^"$2"\ technique:\ ([a-z0-9-]+)\ (—|\+IBQ-)\  ]] \
      && [[ "$(basename "$1")" == [0-9][0-9][0-9]-"${BASH_REMATCH[1]}".* ]] ;;
    benign) [[ "$first" == "$2 benign: "* ]] && sed -n 2p "$1" | grep -q "^$2 sample-input: {" ;;
  esac || { echo "FAIL header: $1"; fail=1; }
}
for f in "$here"/python/malicious/*.py; do check_header "$f" "#" malicious; done
for f in "$here"/javascript/malicious/*.js; do check_header "$f" "//" malicious; done
for f in "$here"/python/benign/*.py "$here"/bench/*.py; do check_header "$f" "#" benign; done
for f in "$here"/javascript/benign/*.js; do check_header "$f" "//" benign; done

# README.md must list every sample, and list no file that does not exist.
for f in "$here"/python/*/*.py "$here"/javascript/*/*.js; do
  grep -qF "| \`$(basename "$f")\` |" "$here/README.md" || { echo "FAIL not in README.md: $f"; fail=1; }
done
for name in $(grep -oE '^\| `[0-9]{3}-[a-z0-9-]+\.(py|js)`' "$here/README.md" | tr -d '|` '); do
  compgen -G "$here/*/*/$name" >/dev/null || { echo "FAIL README.md lists a missing file: $name"; fail=1; }
done

run_benign() { # file, interpreter, comment prefix
  local input
  input="$(sed -n 2p "$1" | sed "s|^$3 sample-input: ||")"
  if ! printf '%s' "$input" | (cd "$tmp" && "$2" "$1") >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL run: $1"; cat "$tmp/err"; fail=1; return
  fi
  "$py" -c 'import json,sys; json.loads(sys.stdin.read())' <"$tmp/out" \
    || { echo "FAIL output is not one JSON document: $1"; fail=1; }
}
for f in "$here"/python/benign/*.py "$here"/bench/*.py; do run_benign "$f" "$py" "#"; done
for f in "$here"/javascript/benign/*.js; do run_benign "$f" node "//"; done

count() { find "$here/$1" -maxdepth 1 -type f | wc -l; }
echo "python malicious $(count python/malicious), python benign $(count python/benign)," \
  "javascript malicious $(count javascript/malicious), javascript benign $(count javascript/benign)"
[ "$fail" -eq 0 ] && echo "corpora OK" || { echo "corpora FAILED"; exit 1; }
