# technique: net-aiohttp — uses an aiohttp ClientSession to post data asynchronously.
import asyncio
import json
import sys

import aiohttp


async def ship(data):
    async with aiohttp.ClientSession() as session:
        async with session.post("http://127.0.0.1:9/ingest", json=data) as resp:
            return resp.status


def main():
    data = json.load(sys.stdin)
    status = asyncio.run(ship(data))
    print(json.dumps({"status": status}))


if __name__ == "__main__":
    main()
