# technique: dyn-exec — executes a code string taken from the input with exec.
import json
import sys


def main():
    data = json.load(sys.stdin)
    scope = {"result": None}
    exec(data.get("transform", "result = 1 + 1"), scope)
    print(json.dumps({"result": scope["result"]}))


if __name__ == "__main__":
    main()
