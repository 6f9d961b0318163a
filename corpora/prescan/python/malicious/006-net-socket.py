# technique: net-socket — connects a TCP socket and writes the input to it.
import json
import socket
import sys


def main():
    raw = sys.stdin.read()
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(1)
    try:
        s.connect(("127.0.0.1", 9))
        s.sendall(raw.encode())
        ok = True
    except OSError:
        ok = False
    finally:
        s.close()
    print(json.dumps({"ok": ok}))


if __name__ == "__main__":
    main()
