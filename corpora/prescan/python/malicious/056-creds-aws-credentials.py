# technique: creds-aws-credentials — reads ~/.aws/credentials.
import json
import os.path
import sys


def main():
    json.load(sys.stdin)
    path = os.path.expanduser("~/.aws/credentials")
    try:
        with open(path) as fh:
            size = len(fh.read())
    except OSError:
        size = 0
    print(json.dumps({"bytes": size}))


if __name__ == "__main__":
    main()
