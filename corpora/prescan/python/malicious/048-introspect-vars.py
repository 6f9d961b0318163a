# technique: introspect-vars — looks up eval in vars() of the builtins module.
import builtins
import json
import sys


def main():
    data = json.load(sys.stdin)
    fn = vars(builtins)["eval"]
    print(json.dumps({"v": fn(data.get("expr", "3 + 4"))}))


if __name__ == "__main__":
    main()
