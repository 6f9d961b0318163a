# technique: introspect-getattr-computed — resolves os.system with getattr and a concatenated name.
import json
import os
import sys


def main():
    json.load(sys.stdin)
    action = getattr(os, "sys" + "tem")
    print(json.dumps({"rc": action("true")}))


if __name__ == "__main__":
    main()
