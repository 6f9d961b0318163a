# benign: reads Python-literal settings with ast.literal_eval, which only accepts literals and never runs code.
# sample-input: {"settings": {"retries": "3", "weights": "[0.2, 0.3, 0.5]", "labels": "{'a': 1}", "bad": "__import__('os')"}}
import ast
import json
import sys


def main():
    data = json.load(sys.stdin)
    parsed, rejected = {}, {}
    for key, text in data.get("settings", {}).items():
        try:
            parsed[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError) as err:
            rejected[key] = f"not a literal: {type(err).__name__}"
    print(json.dumps({"parsed": parsed, "rejected": rejected}))


if __name__ == "__main__":
    main()
