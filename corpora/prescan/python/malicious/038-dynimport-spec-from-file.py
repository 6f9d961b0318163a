# technique: dynimport-spec-from-file — loads and executes an arbitrary file as a module via importlib.util.
import importlib.machinery
import importlib.util
import json
import sys


def main():
    data = json.load(sys.stdin)
    path = data.get("plugin_path", "/dev/null")
    loader = importlib.machinery.SourceFileLoader("plugin", path)
    spec = importlib.util.spec_from_file_location("plugin", path, loader=loader)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    print(json.dumps({"loaded": mod.__name__}))


if __name__ == "__main__":
    main()
