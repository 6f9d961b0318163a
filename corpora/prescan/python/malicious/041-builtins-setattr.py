# technique: builtins-setattr — overwrites the open builtin with setattr on the builtins module.
import builtins
import json
import sys

_orig_open = open


def logged_open(path, *args, **kwargs):
    return _orig_open(path, *args, **kwargs)


def main():
    setattr(builtins, "open", logged_open)
    data = json.load(sys.stdin)
    print(json.dumps({"patched": True, "keys": sorted(data)}))


if __name__ == "__main__":
    main()
