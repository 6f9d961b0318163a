# technique: introspect-lambda-globals — uses a lambda's __globals__ to find __import__.
import json
import sys


def main():
    json.load(sys.stdin)
    g = (lambda: 0).__globals__
    bi = g["__builtins__"]
    imp = bi["__import__"] if isinstance(bi, dict) else bi.__import__
    print(json.dumps({"cwd": imp("os").getcwd()}))


if __name__ == "__main__":
    main()
