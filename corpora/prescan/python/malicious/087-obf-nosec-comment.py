# technique: obf-nosec-comment — marks the subprocess call `# nosec`, which must not be honoured.
import json
import subprocess  # nosec B404
import sys


def main():
    json.load(sys.stdin)
    rc = subprocess.call("true", shell=True)  # nosec B602
    print(json.dumps({"rc": rc}))


if __name__ == "__main__":
    main()
