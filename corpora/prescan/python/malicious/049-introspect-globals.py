# technique: introspect-globals — reads __builtins__ out of globals() to get exec.
import json
import sys


def main():
    json.load(sys.stdin)
    bi = globals()["__builtins__"]
    run = bi["exec"] if isinstance(bi, dict) else getattr(bi, "exec")
    scope = {}
    run("x = 7", scope)
    print(json.dumps({"x": scope["x"]}))


if __name__ == "__main__":
    main()
