# technique: proc-os-popen — reads a command's output through os.popen.
import json
import os
import sys


def main():
    json.load(sys.stdin)
    with os.popen("id") as pipe:
        ident = pipe.read().strip()
    print(json.dumps({"ident": ident}))


if __name__ == "__main__":
    main()
