# technique: proc-subprocess-run — runs a shell command with subprocess.run.
import json
import subprocess
import sys


def main():
    data = json.load(sys.stdin)
    out = subprocess.run(["id"], capture_output=True, text=True, check=False).stdout
    print(json.dumps({"input_keys": sorted(data), "whoami": out.strip()}))


if __name__ == "__main__":
    main()
