import { expect } from "@playwright/test";
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, DefaultAgentCardResolver } from "@a2a-js/sdk/client";
import { Role, TaskState } from "@a2a-js/sdk";
import * as v03 from "a2a-js-sdk-0.3/client";
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { testWithAgents, REFUNDS_GATE, cards, waitForHydration, type Server } from "./fixtures";

// The official A2A JavaScript client (@a2a-js/sdk from npm) at 1.x and at 0.3 against
// /a2a/<agent>: each reads the one agent card its own way and is answered in its own version's
// shapes. A gated call makes the task input-required; a person approves it in the chat, or the
// client decides with a data part; tasks are got and canceled; streams end as each version says.
const AGENTS = REFUNDS_GATE;

function token(server: Server, user: string): string {
  const made = spawnSync(process.env.COUNTERSIGN_BIN!, ["token", "create", "--user", user, "--name", "a2a"], {
    env: { ...process.env, COUNTERSIGN_DATA_DIR: server.dataDir },
  });
  if (made.status !== 0) throw new Error(`token create: ${made.stderr}`);
  return made.stdout.toString().trim();
}

/** A fetch that sends the token and records each JSON-RPC method with its A2A-Version header. */
function authorized(bearer: string, seen: { method: string; version: string | null }[]) {
  return async (url: RequestInfo | URL, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set("Authorization", `Bearer ${bearer}`);
    if (init.method === "POST") seen.push({ method: JSON.parse(String(init.body)).method, version: headers.get("a2a-version") });
    return fetch(url, { ...init, headers });
  };
}

const order = async (server: Server, bearer: string, id: number) =>
  (await (await fetch(`${server.url}/api/orders/${id}`, { headers: { Authorization: `Bearer ${bearer}` } })).json()) as any;

testWithAgents(AGENTS)("the A2A 1.x JavaScript client asks, a person approves in the chat, and the client sees the task complete", async ({ page, server }) => {
  const alice = token(server, "alice");
  const seen: { method: string; version: string | null }[] = [];
  const fetchImpl = authorized(alice, seen);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  // The card's path is resolved relative to this URL: the trailing slash keeps the agent's name.
  const client = await factory.createFromUrl(`${server.url}/a2a/support/`);
  const message = (parts: any[], taskId = "", contextId = "") => ({ messageId: randomUUID(), role: Role.ROLE_USER, parts, taskId, contextId });
  const text = (value: string) => ({ content: { $case: "text", value } });
  const data = (value: object) => ({ content: { $case: "data", value } });

  let task: any = await client.sendMessage({ message: message([text("refund order 1001")]) });
  expect(TaskState[task.status.state]).toBe("TASK_STATE_INPUT_REQUIRED");
  const request = task.status.message.parts.find((p: any) => p.content?.$case === "data").content.value;
  expect(request.approvals[0].tool).toBe("process_refund");

  // Alice approves it on the card in the chat this task started.
  await page.goto(`/c/${task.contextId}`);
  await waitForHydration(page);
  const card = cards(page).filter({ hasText: "process_refund" });
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await card.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(card).toHaveAttribute("data-status", "succeeded");
  await expect.poll(async () => TaskState[(await client.getTask({ id: task.id })).status.state]).toBe("TASK_STATE_COMPLETED");
  const done: any = await client.getTask({ id: task.id });
  expect(done.artifacts[0].parts[0].content.value).toContain("Refunded");
  expect((await order(server, alice, 1001)).status).toBe("refunded");

  // Rejected by the client with kagent's reason key; the refund does not run.
  task = await client.sendMessage({ message: message([text("refund order 1002")], "", task.contextId) });
  task = await client.sendMessage({ message: message([data({ decision_type: "reject", rejection_reason: "not this one" })], task.id, task.contextId) });
  expect(TaskState[task.status.state]).toBe("TASK_STATE_COMPLETED");
  expect((await order(server, alice, 1002)).status).toBe("open");
  await expect(client.cancelTask({ id: task.id })).rejects.toThrow(/already completed/);
  await expect(client.getTask({ id: "no-such-task" })).rejects.toThrow(/does not exist/);

  task = await client.sendMessage({ message: message([text("refund order 1004")]) });
  expect(TaskState[(await client.cancelTask({ id: task.id })).status.state]).toBe("TASK_STATE_CANCELED");

  // Streamed: the task, a status update, the task as it settled.
  const events: string[] = [];
  for await (const event of client.sendMessageStream({ message: message([text("refund order 1005")]) })) events.push((event as any).payload.$case);
  expect(events).toEqual(["task", "statusUpdate", "task"]);

  expect([...new Set(seen.map((s) => s.method))].sort()).toEqual(["CancelTask", "GetTask", "SendMessage", "SendStreamingMessage"]);
  expect([...new Set(seen.map((s) => s.version))]).toEqual(["1.0"]);
});

testWithAgents(AGENTS)("the A2A 0.3 JavaScript client is answered in 0.3's shapes and decides with data parts", async ({ server }) => {
  const alice = token(server, "alice");
  const seen: { method: string; version: string | null }[] = [];
  const factory = new v03.ClientFactory(
    v03.ClientFactoryOptions.createFrom(v03.ClientFactoryOptions.default, {
      transports: [new v03.JsonRpcTransportFactory({ fetchImpl: authorized(alice, seen) })],
    }),
  );
  const client = await factory.createFromUrl(`${server.url}/a2a/support/`);
  const card = await client.getAgentCard();
  expect([card.url, card.protocolVersion, card.preferredTransport]).toEqual([`${server.url}/a2a/support`, "0.3", "JSONRPC"]);
  const message = (parts: any[], taskId?: string, contextId?: string) => ({ kind: "message" as const, messageId: randomUUID(), role: "user" as const, parts, taskId, contextId });

  let task: any = await client.sendMessage({ message: message([{ kind: "text", text: "refund order 1001" }]) });
  expect([task.kind, task.status.state, task.status.message.role]).toEqual(["task", "input-required", "agent"]);
  const request = task.status.message.parts.find((p: any) => p.kind === "data").data;
  expect(request.approvals[0].tool).toBe("process_refund");
  task = await client.sendMessage({ message: message([{ kind: "data", data: { decision_type: "approve" } }], task.id, task.contextId) });
  expect(task.status.state).toBe("completed");
  expect(task.artifacts[0].parts[0]).toMatchObject({ kind: "text" });
  expect((await order(server, alice, 1001)).status).toBe("refunded");
  expect((await client.getTask({ id: task.id })).status.state).toBe("completed");
  // This client names the error by its code (-32002) in its own words.
  await expect(client.cancelTask({ id: task.id })).rejects.toThrow(/cannot be canceled/);

  task = await client.sendMessage({ message: message([{ kind: "text", text: "refund order 1004" }]) });
  expect((await client.cancelTask({ id: task.id })).status.state).toBe("canceled");

  // Streamed: ends with a status update marked final; the approval streams the answer as an artifact first.
  const asked: any[] = [];
  for await (const event of client.sendMessageStream({ message: message([{ kind: "text", text: "refund order 1005" }]) })) asked.push(event);
  expect(asked.map((e) => e.kind)).toEqual(["task", "status-update"]);
  expect([asked[1].status.state, asked[1].final]).toEqual(["input-required", true]);
  const approved: any[] = [];
  const decision = message([{ kind: "data", data: { decision_type: "approve" } }], asked[0].id, asked[0].contextId);
  for await (const event of client.sendMessageStream({ message: decision })) approved.push(event);
  expect(approved.map((e) => e.kind)).toEqual(["task", "artifact-update", "status-update"]);
  expect([approved.at(-1).status.state, approved.at(-1).final]).toEqual(["completed", true]);
  expect((await order(server, alice, 1005)).status).toBe("refunded");

  expect([...new Set(seen.map((s) => s.method))].sort()).toEqual(["message/send", "message/stream", "tasks/cancel", "tasks/get"]);
  expect([...new Set(seen.map((s) => s.version))]).toEqual([null]);
});
