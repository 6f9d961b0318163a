# technique: proc-pty-spawn — spawns a program on a pseudo-terminal with pty.spawn.
import json
import pty
import sys


def main():
    json.load(sys.stdin)
    status = pty.spawn(["true"])
    print(json.dumps({"status": status}))


if __name__ == "__main__":
    main()
