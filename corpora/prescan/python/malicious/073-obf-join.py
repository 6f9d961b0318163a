# technique: obf-join — joins single letters into "eval" and fetches it from builtins.
import builtins
import json
import sys


def main():
    data = json.load(sys.stdin)
    name = "".join(["e", "v", "a", "l"])
    fn = getattr(builtins, name)
    print(json.dumps({"v": fn(data.get("expr", "1 + 1"))}))


if __name__ == "__main__":
    main()
