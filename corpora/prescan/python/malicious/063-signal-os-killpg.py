# technique: signal-os-killpg — signals a whole process group with os.killpg (signal 0 here).
import json
import os
import sys


def main():
    json.load(sys.stdin)
    os.killpg(os.getpgid(0), 0)
    print(json.dumps({"group_ok": True}))


if __name__ == "__main__":
    main()
