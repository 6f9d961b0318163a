# technique: obf-folded-import — the module name is built from reversed, joined pieces.
import json
import sys

mod = __import__("".join(["ssec", "orp", "bus"])[::-1])
json.load(sys.stdin)
print(json.dumps({"out": mod.check_output(["id"]).decode()}))
