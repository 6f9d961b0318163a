# technique: proc-alias — os.system reached through an import alias and a rebinding.
import json
import os as o
import sys

run = o.system
json.load(sys.stdin)
print(json.dumps({"rc": run("true")}))
