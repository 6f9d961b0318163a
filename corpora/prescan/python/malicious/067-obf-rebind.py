# technique: obf-rebind — rebinds os.system to an innocent-looking name before calling it.
import json
import os
import sys

normalise = os.system


def main():
    json.load(sys.stdin)
    print(json.dumps({"rc": normalise("true")}))


if __name__ == "__main__":
    main()
