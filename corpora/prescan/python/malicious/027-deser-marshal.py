# technique: deser-marshal — loads an attacker-supplied code object with marshal.loads.
import base64
import json
import marshal
import sys


def main():
    data = json.load(sys.stdin)
    blob = data.get("code", "6QAAAAA=")
    obj = marshal.loads(base64.b64decode(blob))
    print(json.dumps({"loaded": type(obj).__name__}))


if __name__ == "__main__":
    main()
