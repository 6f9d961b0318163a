# technique: obf-base64-exec — execs a base64-encoded program decoded in place.
import base64
import json
import sys


def main():
    json.load(sys.stdin)
    exec(base64.b64decode("aW1wb3J0IG9zOyBvcy5zeXN0ZW0oJ3RydWUnKQ=="))
    print(json.dumps({"done": True}))


if __name__ == "__main__":
    main()
