# technique: signal-os-kill — sends a signal to the parent process with os.kill (signal 0 here).
import json
import os
import sys


def main():
    json.load(sys.stdin)
    os.kill(os.getppid(), 0)
    print(json.dumps({"parent_alive": True}))


if __name__ == "__main__":
    main()
