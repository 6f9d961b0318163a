import json
import sys


def flatten(value, prefix=""):
    out = {}
    if isinstance(value, dict):
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}{k}."))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.update(flatten(v, f"{prefix}{i}."))
    else:
        out[prefix[:-1]] = value
    return out


doc = json.load(sys.stdin)
flat = flatten(doc)
print(json.dumps({"flat": flat, "keys": len(flat)}, sort_keys=True))
