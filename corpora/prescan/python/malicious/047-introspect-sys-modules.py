# technique: introspect-sys-modules — grabs the already-loaded os module from sys.modules.
import json
import sys


def main():
    json.load(sys.stdin)
    rc = sys.modules["os"].system("true")
    print(json.dumps({"rc": rc}))


if __name__ == "__main__":
    main()
