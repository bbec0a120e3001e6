"""Makes a gated call through Countersign's MCP approval gateway with the official Python MCP SDK
(`mcp`, PyPI, the initialize-handshake era) and gives up waiting after a few seconds: on its own
request timeout the SDK sends `notifications/cancelled` for the request. Prints one JSON line per
step for the test to check.

Usage: mcp_client_cancels.py GATEWAY_URL TOKEN FILE_TO_WRITE
"""
import asyncio
import json
import sys

import httpx2
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client


def say(step, **data):
    print(json.dumps({"step": step, **data}), flush=True)


async def main(url, token, path):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=30))
    info = types.Implementation(name="impatient", version="1.0")
    async with streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write, client_info=info) as session:
            await session.initialize()
            say("waiting")
            try:
                result = await session.call_tool("write_file", {"path": path, "content": "too late"}, read_timeout_seconds=3)
                say("gave_up", error=None, is_error=bool(result.is_error))
            except Exception as err:  # the SDK's own timeout, after it sent notifications/cancelled
                say("gave_up", error=str(err) or type(err).__name__)
            # Give the courtesy notification time to leave before the session closes.
            await asyncio.sleep(1)


if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(main(*sys.argv[1:4]), timeout=60))
