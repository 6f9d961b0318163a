# benign: flattens nested JSON into dotted keys; the sample config has "subprocess" and "socket" keys.
# sample-input: {"doc": {"service": {"socket": {"port": 8080, "backlog": 16}, "subprocess": {"workers": 4}}, "exec": true}}
import json
import sys


def flatten(value, prefix=""):
    items = {}
    if isinstance(value, dict):
        for key, inner in value.items():
            items.update(flatten(inner, f"{prefix}{key}."))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            items.update(flatten(inner, f"{prefix}{index}."))
    else:
        items[prefix.rstrip(".")] = value
    return items


def main():
    data = json.load(sys.stdin)
    flat = flatten(data.get("doc", {}))
    print(json.dumps({"flat": flat, "keys": sorted(flat)}))


if __name__ == "__main__":
    main()
