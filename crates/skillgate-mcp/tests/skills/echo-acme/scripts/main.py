import json
import sys

data = json.load(sys.stdin)
print(json.dumps({"n": data["n"], "double": data["n"] * 2}))
