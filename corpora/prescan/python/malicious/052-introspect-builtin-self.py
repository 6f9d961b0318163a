# technique: introspect-builtin-self — reaches the builtins module through print.__self__.
import json
import sys


def main():
    data = json.load(sys.stdin)
    mod = print.__self__
    loader = getattr(mod, "__import__")
    platform_mod = loader("os")
    print(json.dumps({"pid": platform_mod.getpid(), "n": len(data)}))


if __name__ == "__main__":
    main()
