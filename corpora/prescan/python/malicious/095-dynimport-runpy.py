# technique: dynimport-runpy — executes an arbitrary file as a script with runpy.run_path.
import json
import runpy
import sys


def main():
    data = json.load(sys.stdin)
    namespace = runpy.run_path(data.get("script", "/dev/null"))
    print(json.dumps({"names": sorted(k for k in namespace if not k.startswith("__"))}))


if __name__ == "__main__":
    main()
