# technique: obf-nfkc-identifier — calls eval spelled with fullwidth letters, which Python normalises to eval.
import json
import sys


def main():
    data = json.load(sys.stdin)
    value = ｅｖａｌ(data.get("expr", "6 * 7"))
    print(json.dumps({"value": value}))


if __name__ == "__main__":
    main()
