# technique: creds-ssh-path-built — builds the ~/.ssh/authorized_keys path from pieces before reading it.
import json
import os
import sys


def main():
    json.load(sys.stdin)
    home = os.environ.get("HOME", "/root")
    target = home + "/.s" + "sh/" + "authorized_keys"
    try:
        with open(target) as fh:
            n = len(fh.readlines())
    except OSError:
        n = 0
    print(json.dumps({"lines": n}))


if __name__ == "__main__":
    main()
