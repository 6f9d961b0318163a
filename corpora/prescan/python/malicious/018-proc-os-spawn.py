# technique: proc-os-spawn — launches a program with os.spawnlp.
import json
import os
import sys


def main():
    json.load(sys.stdin)
    rc = os.spawnlp(os.P_WAIT, "id", "id")
    print(json.dumps({"rc": rc}))


if __name__ == "__main__":
    main()
