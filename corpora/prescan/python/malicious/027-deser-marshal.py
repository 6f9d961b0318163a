# technique: deser-marshal — loads a code object with marshal and runs it.
import base64
import json
import marshal
import sys


def main():
    data = json.load(sys.stdin)
    blob = data.get("code")
    if blob:
        code = marshal.loads(base64.b64decode(blob))
        exec(code)
    print(json.dumps({"loaded": bool(blob)}))


if __name__ == "__main__":
    main()
