# technique: proc-asyncio-subprocess-shell — runs a shell string via an event loop's subprocess_shell.
import asyncio
import json
import sys


async def probe():
    proc = await asyncio.create_subprocess_shell("true")
    return await proc.wait()


def main():
    json.load(sys.stdin)
    rc = asyncio.get_event_loop_policy().new_event_loop().run_until_complete(probe())
    print(json.dumps({"rc": rc}))


if __name__ == "__main__":
    main()
