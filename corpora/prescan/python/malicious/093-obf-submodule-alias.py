# technique: obf-submodule-alias — aliases urllib.request and calls urlopen through the alias.
import json
import sys
import urllib.request as web


def main():
    json.load(sys.stdin)
    try:
        body = web.urlopen("http://127.0.0.1:9/", timeout=1).read()
    except OSError:
        body = b""
    print(json.dumps({"bytes": len(body)}))


if __name__ == "__main__":
    main()
