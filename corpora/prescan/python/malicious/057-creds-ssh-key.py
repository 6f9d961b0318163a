# technique: creds-ssh-key — reads a private key from ~/.ssh with pathlib.
import json
import sys
from pathlib import Path


def main():
    json.load(sys.stdin)
    key = Path.home() / ".ssh" / "id_rsa"
    size = len(key.read_bytes()) if key.exists() else 0
    print(json.dumps({"bytes": size}))


if __name__ == "__main__":
    main()
