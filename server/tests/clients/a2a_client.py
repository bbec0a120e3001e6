"""Drives a Countersign agent through the official A2A client at protocol 1.x (a2a-sdk 1.x, PyPI;
a2a_client_03.py is the 0.3 client): a gated call makes
the task input-required with the approval request as a data part; a message with a data part
{"decision_type": ...} decides it; GetTask and CancelTask answer as the spec says, and unknown
tasks are the spec's errors. Prints one JSON line per step for the Rust test to check.

Usage: a2a_client.py AGENT_URL TOKEN
"""
import asyncio
import json
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.types import a2a_pb2 as pb
from google.protobuf import json_format, struct_pb2


def say(step, **data):
    print(json.dumps({"step": step, **data}), flush=True)


def text_message(text, task_id=None, context_id=None):
    return pb.Message(message_id=str(uuid.uuid4()), role=pb.Role.ROLE_USER, parts=[pb.Part(text=text)],
                      task_id=task_id or "", context_id=context_id or "")


def data_message(data, task_id, context_id):
    value = json_format.ParseDict(data, struct_pb2.Value())
    return pb.Message(message_id=str(uuid.uuid4()), role=pb.Role.ROLE_USER, parts=[pb.Part(data=value)],
                      task_id=task_id, context_id=context_id)


async def send(client, message, updates=None):
    """The last task the agent answers with (SendMessage, or the end of SendStreamingMessage);
    status updates on the way are counted in `updates`."""
    task = None
    async for response in client.send_message(pb.SendMessageRequest(message=message)):
        if response.HasField("task"):
            task = response.task
        elif response.HasField("status_update") and updates is not None:
            updates.append(response.status_update)
    return task


def data_parts(task):
    return [json_format.MessageToDict(p.data) for p in task.status.message.parts if p.HasField("data")]


async def main(url, token):
    seen = []

    async def record(request):
        seen.append({"method": json.loads(request.content or b"{}").get("method"), "version": request.headers.get("a2a-version")})

    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60, event_hooks={"request": [record]})
    card = await A2ACardResolver(http, url).get_agent_card()
    say("card", name=card.name, interfaces=[i.protocol_version for i in card.supported_interfaces])
    client = await create_client(url, ClientConfig(streaming=False, httpx_client=http))

    task = await send(client, text_message("refund order 1001"))
    requests = data_parts(task)
    say("asked", state=pb.TaskState.Name(task.status.state), task_id=task.id, context_id=task.context_id,
        approvals=requests[0]["approvals"] if requests else [])

    task = await send(client, data_message({"decision_type": "approve"}, task.id, task.context_id))
    answer = "".join(p.text for a in task.artifacts for p in a.parts)
    say("approved", state=pb.TaskState.Name(task.status.state), answer=answer)

    got = await client.get_task(pb.GetTaskRequest(id=task.id))
    say("got", state=pb.TaskState.Name(got.status.state))

    # Approved with edited arguments: a data part is a protobuf Value, so its numbers arrive as
    # floats (1003.0, 2.0); the integer the tool's schema asks for is taken from the whole float.
    task = await send(client, text_message("refund order 1003", context_id=got.context_id))
    edit = {"decision_type": "approve", "args": {"order_id": 1003, "amount": 2}}
    task = await send(client, data_message(edit, task.id, task.context_id))
    say("edited", state=pb.TaskState.Name(task.status.state), sent=json_format.MessageToJson(json_format.ParseDict(edit, struct_pb2.Value())))

    # A second turn in the same context, denied with a reason.
    task = await send(client, text_message("refund order 1002", context_id=got.context_id))
    asked_again = pb.TaskState.Name(task.status.state)
    task = await send(client, data_message({"decision_type": "deny", "reason": "not this one"}, task.id, task.context_id))
    say("denied", asked=asked_again, state=pb.TaskState.Name(task.status.state), same_context=task.context_id == got.context_id)

    for name, call in [
        ("unknown_task", lambda: client.get_task(pb.GetTaskRequest(id="no-such-task"))),
        ("cancel_finished", lambda: client.cancel_task(pb.CancelTaskRequest(id=task.id))),
    ]:
        try:
            await call()
            say(name, error=None)
        except Exception as error:  # the SDK raises its own error types; the message carries the code
            say(name, error=f"{type(error).__name__}: {error}")

    # A task waiting for a person, canceled.
    task = await send(client, text_message("refund order 1004"))
    canceled = await client.cancel_task(pb.CancelTaskRequest(id=task.id))
    say("canceled", state=pb.TaskState.Name(canceled.status.state))

    # The same exchange over SendStreamingMessage.
    streaming = await create_client(url, ClientConfig(streaming=True, httpx_client=http))
    updates = []
    task = await send(streaming, text_message("refund order 1005"), updates)
    say("stream_asked", state=pb.TaskState.Name(task.status.state), updates=len(updates))
    task = await send(streaming, data_message({"decision_type": "approve"}, task.id, task.context_id), [])
    say("stream_approved", state=pb.TaskState.Name(task.status.state))
    say("wire", methods=sorted({s["method"] for s in seen if s["method"]}), versions=sorted({str(s["version"]) for s in seen if s["method"]}))
    await http.aclose()


asyncio.run(main(sys.argv[1], sys.argv[2]))
