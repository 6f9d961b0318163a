# technique: builtins-dunder-lookup — fetches eval out of __builtins__ by subscript.
import json
import sys


def main():
    data = json.load(sys.stdin)
    table = __builtins__ if isinstance(__builtins__, dict) else __builtins__.__dict__
    ev = table["eval"]
    print(json.dumps({"value": ev(data.get("expr", "6 * 7"))}))


if __name__ == "__main__":
    main()
