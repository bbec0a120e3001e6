"""Drives a Countersign agent through the official A2A client at protocol 0.3 (a2a-sdk 0.3.x from
PyPI, in a venv of its own): the card validates as a 0.3 card, a gated call makes the task
`input-required` with the approval request as a `kind: "data"` part, kagent's decision parts
(`approve`, `reject` with `rejection_reason`, `batch`) decide it, tasks/get and tasks/cancel answer
in 0.3's shapes, and a streamed message ends with a `final` status update. Prints one JSON line
per step for the Rust test to check.

Usage: a2a_client_03.py AGENT_URL TOKEN
"""
import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import DataPart, Message, Part, Role, TaskIdParams, TaskQueryParams, TextPart


def say(step, **data):
    print(json.dumps({"step": step, **data}), flush=True)


def message(parts, task=None, context_id=None):
    return Message(role=Role.user, message_id=str(uuid.uuid4()), parts=parts,
                   task_id=task.id if task else None, context_id=task.context_id if task else context_id)


def text(words, context_id=None):
    return message([Part(root=TextPart(text=words))], context_id=context_id)


def data(value, task):
    return message([Part(root=DataPart(data=value))], task)


async def send(client, msg, updates=None):
    """The last task of the answer; the updates on the way are collected in `updates`."""
    task = None
    async for event in client.send_message(msg):
        task, update = event if isinstance(event, tuple) else (None, None)
        if update is not None and updates is not None:
            updates.append(update)
    return task


def requests(task):
    return [p.root.data for p in task.status.message.parts if isinstance(p.root, DataPart)]


async def main(url, token):
    seen = []

    async def record(request):
        seen.append({"method": json.loads(request.content or b"{}").get("method"), "version": request.headers.get("a2a-version")})

    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60,
                             event_hooks={"request": [record]})
    card = await A2ACardResolver(http, url).get_agent_card()
    say("card", name=card.name, url=card.url, protocol_version=card.protocol_version, transport=card.preferred_transport)
    client = ClientFactory(ClientConfig(streaming=False, httpx_client=http)).create(card)

    task = await send(client, text("refund order 1001"))
    asked = requests(task)
    say("asked", state=task.status.state.value, approvals=asked[0]["approvals"] if asked else [])
    task = await send(client, data({"decision_type": "approve"}, task))
    answer = "".join(p.root.text for a in task.artifacts or [] for p in a.parts)
    say("approved", state=task.status.state.value, answer=answer)
    got = await client.get_task(TaskQueryParams(id=task.id))
    say("got", state=got.status.state.value)

    # kagent's reject, with its own reason key.
    task = await send(client, text("refund order 1002", context_id=got.context_id))
    task = await send(client, data({"decision_type": "reject", "rejection_reason": "not this one"}, task))
    say("rejected", state=task.status.state.value)

    # A batch naming a call that is not pending changes nothing; then one naming it by call id decides it.
    task = await send(client, text("refund order 1003"))
    call_id = requests(task)[0]["approvals"][0]["call_id"]
    try:
        await send(client, data({"decision_type": "batch", "decisions": {"call_nope": "approve"}}, task))
        say("batch_unknown", error=None)
    except Exception as error:
        say("batch_unknown", error=f"{type(error).__name__}: {error}")
    still = await client.get_task(TaskQueryParams(id=task.id))
    task = await send(client, data({"decision_type": "batch", "decisions": {call_id: "reject"},
                                     "rejection_reasons": {call_id: "batch says no"}}, task))
    say("batch", before=still.status.state.value, state=task.status.state.value, task_id=task.id)

    for name, call in [
        ("unknown_task", lambda: client.get_task(TaskQueryParams(id="no-such-task"))),
        ("cancel_finished", lambda: client.cancel_task(TaskIdParams(id=task.id))),
    ]:
        try:
            await call()
            say(name, error=None)
        except Exception as error:
            say(name, error=f"{type(error).__name__}: {error}")

    task = await send(client, text("refund order 1004"))
    canceled = await client.cancel_task(TaskIdParams(id=task.id))
    say("canceled", state=canceled.status.state.value)

    streaming = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(card)
    updates = []
    task = await send(streaming, text("refund order 1005"), updates)
    say("stream_asked", state=task.status.state.value, updates=[type(u).__name__ for u in updates],
        final=[getattr(u, "final", None) for u in updates])
    updates = []
    task = await send(streaming, data({"decision_type": "approve"}, task), updates)
    say("stream_approved", state=task.status.state.value, updates=[type(u).__name__ for u in updates])
    say("wire", methods=sorted({s["method"] for s in seen if s["method"]}), versions=sorted({str(s["version"]) for s in seen if s["method"]}))
    await http.aclose()


asyncio.run(main(sys.argv[1], sys.argv[2]))
