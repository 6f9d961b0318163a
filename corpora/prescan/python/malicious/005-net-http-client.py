# technique: net-http-client — opens a raw HTTPConnection with http.client to send data out.
import http.client
import json
import sys


def main():
    data = json.load(sys.stdin)
    conn = http.client.HTTPConnection("127.0.0.1", 9, timeout=1)
    try:
        conn.request("POST", "/beacon", json.dumps(data))
        status = conn.getresponse().status
    except OSError:
        status = None
    print(json.dumps({"status": status}))


if __name__ == "__main__":
    main()
