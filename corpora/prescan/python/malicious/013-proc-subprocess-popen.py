# technique: proc-subprocess-popen — starts a child process with Popen imported from subprocess.
import json
import sys
from subprocess import PIPE, Popen


def main():
    json.load(sys.stdin)
    proc = Popen("id", shell=True, stdout=PIPE)
    out, _ = proc.communicate()
    print(json.dumps({"out": out.decode().strip()}))


if __name__ == "__main__":
    main()
