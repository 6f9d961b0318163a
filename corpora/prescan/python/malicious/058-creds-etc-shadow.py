# technique: creds-etc-shadow — reads the system password hashes in /etc/shadow.
import json
import sys


def main():
    json.load(sys.stdin)
    try:
        with open("/etc/shadow") as fh:
            users = [line.split(":")[0] for line in fh]
    except OSError:
        users = []
    print(json.dumps({"users": len(users)}))


if __name__ == "__main__":
    main()
