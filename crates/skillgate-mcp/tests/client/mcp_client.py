"""A real MCP client (the official Python SDK, `mcp` on PyPI) for skillgate's tests.

Usage:
    mcp_client.py [--legacy] stdio COMMAND [ARG...]     (the server as a subprocess, over stdio)
    mcp_client.py http URL AGENT             (streamable HTTP; AGENT goes in the
                                              `x-test-agent` header the test's stand-in
                                              authentication reads; `-`: no header)
    mcp_client.py bearer URL KEY             (streamable HTTP to `skillgate serve`'s /mcp,
                                              with `Authorization: Bearer KEY`)

`--legacy` connects with the `initialize` handshake (protocol 2025-11-25 and earlier)
instead of letting the client choose.

Reads a JSON list of steps on stdin and prints a JSON list with one answer per step:
    {"op": "list"}                              -> {"tools": [Tool, ...]}
    {"op": "call", "name": N, "arguments": {}}  -> {"result": CallToolResult,
                                                    "progress": [progress, ...]}
                                                or {"error": {"code": C, "message": M}}
    {"op": "write", "path": P, "text": T}       -> {} (writes a file, e.g. to change a skill)
    {"op": "remove", "path": P}                 -> {} (removes a folder, e.g. a skill)
    {"op": "wait_list_changed"}                 -> {"tools": [...]} once
                                                   notifications/tools/list_changed arrived
    {"op": "listen", "steps": [...]}            -> {"tools": [...]}: opens a
                                                   `subscriptions/listen` stream for
                                                   tools/list_changed (protocol 2026-07-28),
                                                   runs the write/remove steps, waits for
                                                   the event, then lists the tools
Every model is dumped as the JSON the server sent (camelCase, no nulls).
"""

import json
import shutil
import sys

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def file_op(step):
    if step["op"] == "write":
        with open(step["path"], "w") as f:
            f.write(step["text"])
    elif step["op"] == "remove":
        shutil.rmtree(step["path"])
    else:
        raise SystemExit(f"not a file step: {step['op']!r}")


async def run(server, steps, mode):
    list_changed = anyio.Event()

    async def on_message(message):
        if getattr(message, "method", None) == "notifications/tools/list_changed" or (
            "tools/list_changed" in repr(message)
        ):
            list_changed.set()

    answers = []
    async with Client(
        server, message_handler=on_message, read_timeout_seconds=120, mode=mode
    ) as client:
        for step in steps:
            op = step["op"]
            if op == "list":
                try:
                    tools = await client.list_tools(cache_mode="refresh")
                    answers.append({"tools": [dump(t) for t in tools.tools]})
                except MCPError as e:
                    answers.append({"error": {"code": e.code, "message": e.message}})
            elif op == "call":
                progress = []

                async def on_progress(value, total, message):
                    progress.append({"progress": value, "total": total, "message": message})

                try:
                    result = await client.call_tool(
                        step["name"], step.get("arguments", {}), progress_callback=on_progress
                    )
                    answers.append({"result": dump(result), "progress": progress})
                except MCPError as e:
                    answers.append({"error": {"code": e.code, "message": e.message}})
            elif op in ("write", "remove"):
                file_op(step)
                answers.append({})
            elif op == "listen":
                async with client.listen(tools_list_changed=True) as sub:
                    for inner in step["steps"]:
                        file_op(inner)
                    with anyio.fail_after(60):
                        await sub.__anext__()
                tools = await client.list_tools(cache_mode="refresh")
                answers.append({"tools": [dump(t) for t in tools.tools]})
            elif op == "wait_list_changed":
                with anyio.fail_after(60):
                    await list_changed.wait()
                list_changed = anyio.Event()
                tools = await client.list_tools(cache_mode="refresh")
                answers.append({"tools": [dump(t) for t in tools.tools]})
            else:
                raise SystemExit(f"unknown step {op!r}")
    return answers


def main():
    steps = json.load(sys.stdin)
    args = sys.argv[1:]
    mode = "auto"
    if args[0] == "--legacy":
        mode = "legacy"
        args = args[1:]
    kind = args[0]
    if kind == "stdio":
        server = StdioServerParameters(command=args[1], args=args[2:])
    elif kind == "http":
        url, agent = args[1], args[2]
        headers = {} if agent == "-" else {"x-test-agent": agent}
        http = httpx2.AsyncClient(headers=headers, timeout=120)
        server = streamable_http_client(url, http_client=http)
    elif kind == "bearer":
        url, key = args[1], args[2]
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=120)
        server = streamable_http_client(url, http_client=http)
    else:
        raise SystemExit(f"unknown transport {kind!r}")
    print(json.dumps(anyio.run(run, server, steps, mode)))


if __name__ == "__main__":
    main()
