# technique: net-http-server — binds a listening HTTP server with http.server.
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(204)
        self.end_headers()


def main():
    json.load(sys.stdin)
    server = HTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    server.server_close()
    print(json.dumps({"listened_on": port}))


if __name__ == "__main__":
    main()
