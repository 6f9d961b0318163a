# benign: reports added, removed and changed keys between two JSON documents.
# sample-input: {"before": {"a": 1, "b": {"c": 2}, "eval": "off"}, "after": {"a": 1, "b": {"c": 3}, "d": 4}}
import json
import sys


def diff(before, after, path=""):
    changes = []
    for key in sorted(set(before) | set(after)):
        here = f"{path}/{key}"
        if key not in after:
            changes.append({"op": "removed", "path": here})
        elif key not in before:
            changes.append({"op": "added", "path": here, "value": after[key]})
        elif isinstance(before[key], dict) and isinstance(after[key], dict):
            changes.extend(diff(before[key], after[key], here))
        elif before[key] != after[key]:
            changes.append({"op": "changed", "path": here, "from": before[key], "to": after[key]})
    return changes


def main():
    data = json.load(sys.stdin)
    print(json.dumps({"changes": diff(data.get("before", {}), data.get("after", {}))}))


if __name__ == "__main__":
    main()
