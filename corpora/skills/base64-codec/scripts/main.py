import base64
import binascii
import json
import sys

data = json.load(sys.stdin)
raw = data["text"].encode("utf-8")
decoded = base64.b64decode(data["encoded"]).decode("utf-8")
print(json.dumps({
    "b64": base64.b64encode(raw).decode("ascii"),
    "urlsafe": base64.urlsafe_b64encode(raw).decode("ascii"),
    "b32": base64.b32encode(raw).decode("ascii"),
    "hex": binascii.hexlify(raw).decode("ascii"),
    "decoded": decoded,
}))
