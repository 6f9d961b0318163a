# benign: converts meeting times between fixed UTC offsets with datetime.
# sample-input: {"time": "2026-11-30T09:30:00", "from_offset": 1, "to_offsets": [-5, 0, 9]}
import json
import sys
from datetime import datetime, timedelta, timezone


def main():
    data = json.load(sys.stdin)
    src = timezone(timedelta(hours=float(data.get("from_offset", 0))))
    when = datetime.fromisoformat(data.get("time", "2026-01-01T00:00:00")).replace(tzinfo=src)
    out = {}
    for offset in data.get("to_offsets", []):
        tz = timezone(timedelta(hours=float(offset)))
        out[f"UTC{offset:+g}"] = when.astimezone(tz).isoformat()
    print(json.dumps({"utc": when.astimezone(timezone.utc).isoformat(), "converted": out}))


if __name__ == "__main__":
    main()
