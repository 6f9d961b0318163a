# technique: dynimport-import-module-alias — imports a module named in the input via an aliased import_module.
import json
import sys
from importlib import import_module as load


def main():
    data = json.load(sys.stdin)
    plugin = load(data.get("plugin", "socket"))
    print(json.dumps({"plugin": plugin.__name__}))


if __name__ == "__main__":
    main()
