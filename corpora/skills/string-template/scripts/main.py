import json
import string
import sys

data = json.load(sys.stdin)
tpl = string.Template(data["template"])
messages = [tpl.safe_substitute(row) for row in data["rows"]]
width = max(len(r["name"]) for r in data["rows"])
table = "\n".join(f"{r['name'].ljust(width)} | {r['due']:>10}" for r in data["rows"])
print(json.dumps({"messages": messages, "table": table, "letters": string.ascii_lowercase[:5]}))
