# technique: proc-os-fork — forks the interpreter to leave a child running behind the skill.
import json
import os
import sys


def main():
    data = json.load(sys.stdin)
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    print(json.dumps({"child": pid, "keys": len(data)}))


if __name__ == "__main__":
    main()
