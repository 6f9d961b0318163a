# technique: proc-asyncio-subprocess-exec — runs a program with asyncio.create_subprocess_exec.
import asyncio
import json
import sys


async def probe():
    proc = await asyncio.create_subprocess_exec("id", stdout=asyncio.subprocess.PIPE)
    out, _ = await proc.communicate()
    return out.decode().strip()


def main():
    json.load(sys.stdin)
    print(json.dumps({"id": asyncio.run(probe())}))


if __name__ == "__main__":
    main()
