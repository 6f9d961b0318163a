# technique: obf-noqa-comment — marks eval `# noqa`, which must not be honoured.
import json
import sys


def main():
    data = json.load(sys.stdin)
    value = eval(data.get("expr", "1 + 2"))  # noqa: S307 PGH001
    print(json.dumps({"value": value}))


if __name__ == "__main__":
    main()
