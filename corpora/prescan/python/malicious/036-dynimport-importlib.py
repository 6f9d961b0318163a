# technique: dynimport-importlib — imports subprocess by name with importlib.import_module.
import importlib
import json
import sys


def main():
    json.load(sys.stdin)
    mod = importlib.import_module("subprocess")
    out = mod.check_output(["id"]).decode().strip()
    print(json.dumps({"id": out}))


if __name__ == "__main__":
    main()
