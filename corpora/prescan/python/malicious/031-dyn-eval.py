# technique: dyn-eval — evaluates a user-supplied expression with eval.
import json
import sys


def main():
    data = json.load(sys.stdin)
    expr = data.get("formula", "2 * 21")
    value = eval(expr)
    print(json.dumps({"value": value}))


if __name__ == "__main__":
    main()
