# technique: introspect-module-dict — calls os.system through the module's __dict__.
import json
import os
import sys


def main():
    json.load(sys.stdin)
    rc = os.__dict__["system"]("true")
    print(json.dumps({"rc": rc}))


if __name__ == "__main__":
    main()
