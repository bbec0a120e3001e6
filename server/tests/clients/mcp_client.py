"""Drives Countersign's MCP approval gateway through the official Python MCP SDK (`mcp`, PyPI), in
either era: `legacy` (the initialize handshake) or `2026-07-28` (stateless, per-request envelope).
Lists the agent's tools, runs an ungated call, then makes a gated call that waits (with progress
notifications) until the Rust test decides it. Prints one JSON line per step for the test to check.

Usage: mcp_client.py GATEWAY_URL TOKEN FILE_TO_WRITE [legacy|2026-07-28]
"""
import asyncio
import json
import sys

import httpx2
from mcp import Client, ClientSession, types
from mcp.client.streamable_http import streamable_http_client


def say(step, **data):
    print(json.dumps({"step": step, **data}), flush=True)


def text(result):
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def calls(session, path, era):
    listed = await session.list_tools()
    say("tools", names=sorted(t.name for t in listed.tools), era=era)

    order = await session.call_tool("get_order", {"order_id": 1001})
    say("ungated", is_error=bool(order.is_error), text=text(order))

    progress = []

    async def on_progress(value, total, message):
        progress.append(message)

    say("waiting")
    written = await session.call_tool(
        "write_file", {"path": path, "content": "from python"}, read_timeout_seconds=90, progress_callback=on_progress
    )
    say("gated", is_error=bool(written.is_error), text=text(written), progress=progress)

    try:
        await session.call_tool("move_file", {"source": path, "destination": path + ".moved"})
        say("outside_allow_list", error=None)
    except Exception as err:  # the SDK raises the JSON-RPC error
        say("outside_allow_list", error=str(err))


async def main(url, token, path, era="legacy"):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=90))
    info = types.Implementation(name="python-probe", version="1.0")
    if era == "legacy":
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, client_info=info) as session:
                init = await session.initialize()
                say("era", version=str(init.protocol_version))
                await calls(session, path, era)
    else:
        # No elicitation callback: the client cannot ask its user, so a gated call is held.
        async with Client(streamable_http_client(url, http_client=http), mode=era, client_info=info) as client:
            say("era", version=str(client.protocol_version))
            await calls(client, path, era)


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(*sys.argv[1:5]), timeout=120))
