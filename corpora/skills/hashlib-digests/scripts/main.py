import hashlib
import json
import sys
import uuid

text = json.load(sys.stdin)["text"].encode("utf-8")
print(json.dumps({
    "sha256": hashlib.sha256(text).hexdigest(),
    "sha1": hashlib.sha1(text).hexdigest(),
    "md5": hashlib.md5(text).hexdigest(),
    "blake2b_16": hashlib.blake2b(text, digest_size=16).hexdigest(),
    "uuid5": str(uuid.uuid5(uuid.NAMESPACE_URL, text.decode("utf-8"))),
}))
