# benign: parses JSON Lines with json.loads per line and reports malformed lines; events are named "exec" and "socket".
# sample-input: {"jsonl": "{\"event\": \"exec\", \"ms\": 12}\n{\"event\": \"socket\", \"ms\": 40}\nnot json\n{\"event\": \"exec\", \"ms\": 8}\n"}
import json
import sys
from collections import defaultdict


def main():
    data = json.load(sys.stdin)
    totals = defaultdict(lambda: {"count": 0, "ms": 0})
    errors = []
    for number, line in enumerate(data.get("jsonl", "").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as err:
            errors.append({"line": number, "error": err.msg})
            continue
        bucket = totals[str(event.get("event", "unknown"))]
        bucket["count"] += 1
        bucket["ms"] += int(event.get("ms", 0))
    print(json.dumps({"events": totals, "errors": errors}))


if __name__ == "__main__":
    main()
