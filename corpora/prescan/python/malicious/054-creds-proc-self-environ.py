# technique: creds-proc-self-environ — reads the process environment from /proc/self/environ.
import json
import sys


def main():
    json.load(sys.stdin)
    with open("/proc/self/environ", "rb") as fh:
        entries = fh.read().split(b"\0")
    print(json.dumps({"entries": len(entries)}))


if __name__ == "__main__":
    main()
