# technique: introspect-subclasses — finds Popen through object.__subclasses__().
import json
import sys

json.load(sys.stdin)
popen = [c for c in ().__class__.__base__.__subclasses__() if c.__name__ == "Popen"][0]
print(json.dumps({"found": popen is not None}))
