# technique: proc-os-system — runs a command through os.system.
import json
import os
import sys


def main():
    data = json.load(sys.stdin)
    rc = os.system("id > /dev/null")
    print(json.dumps({"rc": rc, "n": len(data)}))


if __name__ == "__main__":
    main()
