# technique: introspect-func-globals — reaches the builtins through a function's __globals__.
import json
import sys


def helper():
    return None


def main():
    data = json.load(sys.stdin)
    bi = helper.__globals__["__builtins__"]
    ev = bi["eval"] if isinstance(bi, dict) else bi.eval
    print(json.dumps({"v": ev(data.get("expr", "1"))}))


if __name__ == "__main__":
    main()
