"""Drives Countersign's MCP approval gateway at protocol 2026-07-28 through the official Python MCP
SDK (`mcp`, PyPI), as a client that can show its user an elicitation:

- `ask URL TOKEN PATH`: the SDK's own loop. A gated write comes back "input required" with an
  elicitation; the callback approves; the SDK sends the call again and gets the written file.
- `resume URL_A URL_B TOKEN PATH`: by hand. The write answered "input required" on replica A;
  the script waits for a line on stdin (the test decides the approval in the queue meanwhile),
  then sends the call again to replica B: with other arguments and with a changed requestState
  (both refused), then as issued, and gets the result.

Prints one JSON line per step for the Rust test to check.
"""
import asyncio
import json
import sys

import httpx2
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client


def say(step, **data):
    print(json.dumps({"step": step, **data}), flush=True)


def text(result):
    return "\n".join(getattr(c, "text", "") for c in result.content)


def connect(url, token, **options):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=90))
    return Client(streamable_http_client(url, http_client=http), mode="2026-07-28",
                  client_info=types.Implementation(name="python-asks", version="1.0"), **options)


async def approve(ctx, params):
    say("elicited", message=params.message, schema=params.requested_schema)
    return types.ElicitResult(action="accept", content={"approve": True})


async def ask(url, token, path):
    async with connect(url, token, elicitation_callback=approve) as client:
        written = await client.call_tool("write_file", {"path": path, "content": "asked"}, read_timeout_seconds=60)
        say("asked", is_error=bool(written.is_error), text=text(written), version=str(client.protocol_version))


async def declined(ctx, params):
    return types.ElicitResult(action="decline")


async def resume(url_a, url_b, token, path):
    args = {"path": path, "content": "resumed"}
    # The client can elicit (it declares the capability), but this script answers by hand.
    async with connect(url_a, token, elicitation_callback=declined) as a:
        first = await a.session.call_tool("write_file", args, allow_input_required=True)
        say("input_required", kind=type(first).__name__, keys=sorted((first.input_requests or {}).keys()),
            message=first.input_requests["approval"].params.message if first.input_requests else None,
            has_state=bool(first.request_state))
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    answer = {"approval": types.ElicitResult(action="accept", content={"approve": True})}
    async with connect(url_b, token, elicitation_callback=declined) as b:
        for name, call_args, state in [
            ("other_args", {"path": path, "content": "something else"}, first.request_state),
            ("changed_state", args, first.request_state[:-4] + "0000"),
        ]:
            try:
                await b.session.call_tool("write_file", call_args, input_responses=answer, request_state=state, allow_input_required=True)
                say(name, error=None)
            except Exception as error:
                say(name, error=str(error))
        done = await b.session.call_tool("write_file", args, input_responses=answer, request_state=first.request_state,
                                         allow_input_required=True, read_timeout_seconds=60)
        say("resumed", kind=type(done).__name__, is_error=bool(getattr(done, "is_error", False)), text=text(done))


if __name__ == "__main__":
    mode, rest = sys.argv[1], sys.argv[2:]
    asyncio.run(asyncio.wait_for({"ask": ask, "resume": resume}[mode](*rest), timeout=120))
