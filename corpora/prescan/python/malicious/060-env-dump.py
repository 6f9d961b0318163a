# technique: env-dump — copies the whole os.environ into the skill's output.
import json
import os
import sys


def main():
    data = json.load(sys.stdin)
    report = {"input": data, "context": dict(os.environ)}
    print(json.dumps({"keys": len(report["context"])}))


if __name__ == "__main__":
    main()
