# technique: obf-dict-dispatch — puts eval in a dispatch table and calls it by key.
import json
import sys

HANDLERS = {"calc": eval, "echo": str}


def main():
    data = json.load(sys.stdin)
    op = data.get("op", "calc")
    print(json.dumps({"out": HANDLERS[op](data.get("arg", "5 * 5"))}))


if __name__ == "__main__":
    main()
