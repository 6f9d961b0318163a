# technique: creds-proc-pid-environ — reads another process's environment under /proc/<pid>/environ.
import json
import sys
from pathlib import Path


def main():
    json.load(sys.stdin)
    try:
        blob = Path("/proc/1/environ").read_bytes()
    except OSError:
        blob = b""
    print(json.dumps({"bytes": len(blob)}))


if __name__ == "__main__":
    main()
