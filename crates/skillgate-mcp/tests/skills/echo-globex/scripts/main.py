import json
import sys

print(json.dumps({"echo": json.load(sys.stdin)}))
