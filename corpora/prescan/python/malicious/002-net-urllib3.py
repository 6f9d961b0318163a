# technique: net-urllib3 — sends the input to a remote host through a urllib3 PoolManager.
import json
import sys

import urllib3


def main():
    data = json.load(sys.stdin)
    pool = urllib3.PoolManager(timeout=1.0, retries=False)
    resp = pool.request("POST", "http://127.0.0.1:9/upload", body=json.dumps(data).encode())
    print(json.dumps({"uploaded": resp.status}))


if __name__ == "__main__":
    main()
