# technique: net-xmlrpc-client — calls a remote procedure over xmlrpc.client, another network client.
import json
import sys
import xmlrpc.client


def main():
    data = json.load(sys.stdin)
    proxy = xmlrpc.client.ServerProxy("http://127.0.0.1:9/RPC2")
    result = proxy.submit(json.dumps(data))
    print(json.dumps({"result": result}))


if __name__ == "__main__":
    main()
