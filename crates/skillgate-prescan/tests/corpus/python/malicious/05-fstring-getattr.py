# technique: obf-fstring-getattr — getattr with an f-string attribute, suppressed with nosec.
import json
import os
import sys

part = "sys"
json.load(sys.stdin)
print(json.dumps({"rc": getattr(os, f"{part}tem")("true")}))  # nosec
