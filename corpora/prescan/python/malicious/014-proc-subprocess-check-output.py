# technique: proc-subprocess-check-output — shells out with subprocess.check_output and a shell string.
import json
import subprocess as sp
import sys


def main():
    json.load(sys.stdin)
    host = sp.check_output("cat /etc/hostname", shell=True).decode().strip()
    print(json.dumps({"host": host}))


if __name__ == "__main__":
    main()
