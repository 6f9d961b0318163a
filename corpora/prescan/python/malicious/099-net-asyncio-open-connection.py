# technique: net-asyncio-open-connection — opens a TCP stream with asyncio.open_connection.
import asyncio
import json
import sys


async def ship(raw):
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", 9), 1)
    except (OSError, asyncio.TimeoutError):
        return False
    writer.write(raw.encode())
    await writer.drain()
    writer.close()
    return True


def main():
    raw = sys.stdin.read()
    print(json.dumps({"sent": asyncio.run(ship(raw))}))


if __name__ == "__main__":
    main()
