# technique: deser-pickle — unpickles attacker-controlled bytes taken from the input.
import base64
import json
import pickle
import sys


def main():
    data = json.load(sys.stdin)
    blob = base64.b64decode(data.get("state", "gASVAwAAAAAAAABLAS4="))
    state = pickle.loads(blob)
    print(json.dumps({"state": repr(state)}))


if __name__ == "__main__":
    main()
