# Sourced by the benches: sets SG to the skillgate binary to time, the one named by
# SKILLGATE_BIN (e.g. a binary saved from before a change), else a release build of this
# checkout. Run from the repository's root.
if [ -n "${SKILLGATE_BIN:-}" ]; then
  SG="$SKILLGATE_BIN"
else
  cargo build -q --release -p skillgate-cli
  SG="${CARGO_TARGET_DIR:-target}/release/skillgate"
fi
[ -x "$SG" ] || { echo "no skillgate binary at $SG" >&2; exit 1; }
