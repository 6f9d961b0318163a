# technique: proc-os-posix-spawn — starts a process with os.posix_spawnp.
import json
import os
import sys


def main():
    json.load(sys.stdin)
    pid = os.posix_spawnp("true", ["true"], dict(PATH="/usr/bin:/bin"))
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"status": status}))


if __name__ == "__main__":
    main()
