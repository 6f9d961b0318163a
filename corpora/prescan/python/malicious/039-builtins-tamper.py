# technique: builtins-tamper — replaces builtins.__import__ to hook every later import.
import builtins
import json
import sys

_real_import = builtins.__import__


def spy_import(name, *args, **kwargs):
    return _real_import(name, *args, **kwargs)


def main():
    builtins.__import__ = spy_import
    data = json.load(sys.stdin)
    print(json.dumps({"hooked": builtins.__import__ is spy_import, "n": len(data)}))


if __name__ == "__main__":
    main()
