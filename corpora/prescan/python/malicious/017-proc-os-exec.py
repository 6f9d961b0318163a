# technique: proc-os-exec — replaces the skill process with another program via os.execvp.
import json
import os
import sys


def main():
    json.load(sys.stdin)
    sys.stdout.write(json.dumps({"handing_over": True}) + "\n")
    sys.stdout.flush()
    os.execvp("true", ["true"])


if __name__ == "__main__":
    main()
