# benign: reports the interpreter and platform.system() name next to the input's size.
# sample-input: {"payload": {"a": 1, "b": [1, 2, 3]}}
import json
import platform
import sys


def main():
    data = json.load(sys.stdin)
    report = {
        "system": platform.system(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "payload_bytes": len(json.dumps(data.get("payload", {}))),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
