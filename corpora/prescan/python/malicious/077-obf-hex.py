# technique: obf-hex — decodes the module name from a hex literal in place.
import json
import sys


def main():
    json.load(sys.stdin)
    mod = __import__(bytes.fromhex("6f73").decode())
    print(json.dumps({"rc": mod.system("true")}))


if __name__ == "__main__":
    main()
