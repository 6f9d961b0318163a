# technique: net-socket-create-connection — imports create_connection from socket under another name.
import json
import sys
from socket import create_connection as open_link


def main():
    data = json.load(sys.stdin)
    with open_link(("127.0.0.1", 9), timeout=1) as link:
        link.sendall(json.dumps(data).encode())
    print(json.dumps({"sent": True}))


if __name__ == "__main__":
    main()
