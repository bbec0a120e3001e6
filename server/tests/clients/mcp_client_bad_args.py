"""Calls a gated tool through Countersign's MCP approval gateway with arguments that break its
schema, with the official Python MCP SDK (`mcp`, PyPI), in either era: `legacy` (the initialize
handshake) or `2026-07-28`. Each call comes back at once as a tool error (`is_error`) whose text
says each problem and whose `structured_content` carries them as `{error, details: [{path,
message}]}`; no one is asked. Also prints each listed tool's `output_schema`: the gateway declares
none, so the SDK checks no structured content against one. Prints one JSON line per step for the
Rust test to check.

Usage: mcp_client_bad_args.py GATEWAY_URL TOKEN [legacy|2026-07-28]
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


async def calls(session, era):
    listed = await session.list_tools()
    say("tools", era=era, output_schemas={t.name: t.output_schema for t in listed.tools})
    # A string for an integer field, then the required field left out.
    for step, arguments in [("wrong_type", {"order_id": "x"}), ("missing", {})]:
        result = await session.call_tool("process_refund", arguments, read_timeout_seconds=30)
        say(step, is_error=bool(result.is_error), text=text(result), structured=result.structured_content)


async def main(url, token, era="legacy"):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=30))
    info = types.Implementation(name="python-bad-args", version="1.0")
    if era == "legacy":
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, client_info=info) as session:
                init = await session.initialize()
                say("era", version=str(init.protocol_version))
                await calls(session, era)
    else:
        async with Client(streamable_http_client(url, http_client=http), mode=era, client_info=info) as client:
            say("era", version=str(client.protocol_version))
            await calls(client, era)


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(*sys.argv[1:4]), timeout=60))
