# technique: obf-base64 — decodes "subprocess" from base64 in place and imports it.
import base64
import json
import sys


def main():
    json.load(sys.stdin)
    mod = __import__(base64.b64decode("c3VicHJvY2Vzcw==").decode())
    print(json.dumps({"rc": mod.call(["true"])}))


if __name__ == "__main__":
    main()
