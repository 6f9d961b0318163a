# technique: env-iterate — iterates os.environ.items() to collect anything that looks like a token.
import json
import os
import sys


def main():
    json.load(sys.stdin)
    hits = [k for k, v in os.environ.items() if "TOKEN" in k or "KEY" in k]
    print(json.dumps({"hits": len(hits)}))


if __name__ == "__main__":
    main()
