import { expect } from "@playwright/test";
import { HttpAgent, getRunOutcome } from "@ag-ui/client";
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { testWithAgents, REFUNDS_GATE, type Server } from "./fixtures";

// The official AG-UI client (@ag-ui/client, npm) against /ag-ui/<agent>: a gated call ends the run
// with an interrupt per pending approval; the next run's resume entries decide them. A reloaded
// client gets the thread and its open interrupts back, under the ids its client gave its messages.
const AGENTS = REFUNDS_GATE;

function token(server: Server, user: string): string {
  const made = spawnSync(process.env.COUNTERSIGN_BIN!, ["token", "create", "--user", user, "--name", "ag-ui"], {
    env: { ...process.env, COUNTERSIGN_DATA_DIR: server.dataDir },
  });
  if (made.status !== 0) throw new Error(`token create: ${made.stderr}`);
  return made.stdout.toString().trim();
}

function agent(server: Server, threadId = randomUUID()): HttpAgent {
  return new HttpAgent({ url: `${server.url}/ag-ui/support`, threadId, headers: { Authorization: `Bearer ${token(server, "alice")}` } });
}

/** Runs the agent and returns the events it streamed, by type. */
async function run(a: HttpAgent, params: Parameters<HttpAgent["runAgent"]>[0] = {}) {
  const events: any[] = [];
  let error: unknown;
  try {
    await a.runAgent(params, { onEvent: ({ event }) => void events.push(event) });
  } catch (e) {
    error = e;
  }
  return { events, error, types: events.map((e) => e.type) };
}

testWithAgents(AGENTS)("an AG-UI run ends in an interrupt per approval; resuming approves one with edited arguments and rejects another", async ({ server }) => {
  const a = agent(server);
  a.messages.push({ id: randomUUID(), role: "user", content: "refund order 1001 and 1002" });
  const first = await run(a);
  expect(first.error).toBeUndefined();
  expect(first.types[0]).toBe("RUN_STARTED");
  expect(first.types).toContain("TOOL_CALL_START");
  const finished = first.events.at(-1);
  const outcome = getRunOutcome(finished)!;
  expect(outcome.type).toBe("interrupt");
  const interrupts = (outcome as any).interrupts as any[];
  expect(interrupts).toHaveLength(2);
  for (const interrupt of interrupts) {
    expect(interrupt.reason).toBe("tool_approval");
    expect(interrupt.toolCallId).toBeTruthy();
    expect(interrupt.responseSchema.required).toEqual(["approved"]);
    expect(Date.parse(interrupt.expiresAt)).toBeGreaterThan(Date.now());
  }
  expect(a.pendingInterrupts).toHaveLength(2);

  // One approved with a smaller amount, one rejected with a reason, in one resume.
  const [refund1001, refund1002] = [...interrupts].sort((x, y) => x.metadata.args.order_id - y.metadata.args.order_id);
  const second = await run(a, {
    resume: [
      { interruptId: refund1001.id, status: "resolved", payload: { approved: true, args: { order_id: 1001, amount: 10 } } },
      { interruptId: refund1002.id, status: "resolved", payload: { approved: false, reason: "not this one" } },
    ],
  });
  expect(second.error).toBeUndefined();
  expect(getRunOutcome(second.events.at(-1))!.type).toBe("success");
  expect(second.types).toContain("TOOL_CALL_RESULT");
  expect(second.types).toContain("TEXT_MESSAGE_CONTENT");

  // Countersign's own view: the first refund ran with the edited amount, the second did not.
  const auth = { Authorization: `Bearer ${token(server, "alice")}` };
  const order = async (id: number) => (await (await fetch(`${server.url}/api/orders/${id}`, { headers: auth })).json()) as any;
  expect((await order(1001)).refunded).toBe(10);
  expect((await order(1002)).status).toBe("open");
});

testWithAgents(AGENTS)("resuming an unknown or already decided interrupt is a RUN_ERROR that decides nothing", async ({ server }) => {
  const a = agent(server);
  a.messages.push({ id: randomUUID(), role: "user", content: "refund order 1001" });
  const first = await run(a);
  const [interrupt] = (getRunOutcome(first.events.at(-1)) as any).interrupts;

  // The client itself refuses to resume an interrupt it was not given; sent anyway, the server
  // answers with the protocol's RUN_ERROR and decides nothing.
  const clientSide = await run(a, { resume: [{ interruptId: "no-such-interrupt", status: "resolved", payload: { approved: true } }] });
  expect(clientSide.error).toBeTruthy();
  const auth = { Authorization: `Bearer ${token(server, "alice")}` };
  const raw = await fetch(`${server.url}/ag-ui/support`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ threadId: a.threadId, runId: randomUUID(), messages: [], tools: [], context: [], state: {},
      resume: [{ interruptId: "no-such-interrupt", status: "resolved", payload: { approved: true } }] }),
  });
  const events = (await raw.text()).split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));
  // The thread's snapshots first (it has a past), then the refusal.
  expect(events.map((e) => e.type)).toEqual(["RUN_STARTED", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT", "RUN_ERROR"]);
  expect(events[3].code).toBe("UNKNOWN_INTERRUPT");

  const state = async () => ((await (await fetch(`${server.url}/api/approvals/${interrupt.id}`, { headers: auth })).json()) as any).state;
  expect(await state()).toBe("pending");

  // Decided in Countersign meanwhile: the client's resume is refused and says by whom.
  const decided = await fetch(`${server.url}/api/approvals/${interrupt.id}/reject`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: "{}" });
  expect(decided.status).toBe(200);
  const late = await run(a, { resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }] });
  const error = late.events.find((e) => e.type === "RUN_ERROR");
  expect(error?.code).toBe("INTERRUPT_RESOLVED");
  expect(error?.message).toContain("already rejected by alice");
  expect(await state()).toBe("rejected");
});

testWithAgents(AGENTS.replace('tools = ["process_refund"]', 'tools = ["process_refund"]\ntimeout_secs = 1'), { COUNTERSIGN_SWEEP_MS: "60000" })(
  "an interrupt past its expiresAt is refused with INTERRUPT_EXPIRED",
  async ({ server }) => {
    const a = agent(server);
    a.messages.push({ id: randomUUID(), role: "user", content: "refund order 1001" });
    const first = await run(a);
    const [interrupt] = (getRunOutcome(first.events.at(-1)) as any).interrupts;
    await new Promise((resolve) => setTimeout(resolve, Date.parse(interrupt.expiresAt) - Date.now() + 200));
    // The client knows it expired (isInterruptExpired); sent anyway, the server refuses it too.
    const raw = await fetch(`${server.url}/ag-ui/support`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token(server, "alice")}`, "content-type": "application/json" },
      body: JSON.stringify({ threadId: a.threadId, runId: randomUUID(), messages: [], tools: [], context: [],
        resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }] }),
    });
    const events = (await raw.text()).split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));
    expect(events.at(-1)).toMatchObject({ type: "RUN_ERROR", code: "INTERRUPT_EXPIRED" });
  },
);

testWithAgents(AGENTS)("a front end that reloads gets the thread and its open interrupts back as snapshots", async ({ server }) => {
  const threadId = randomUUID();
  const first = agent(server, threadId);
  first.messages.push({ id: randomUUID(), role: "user", content: "refund order 1001" });
  const asked = await run(first);
  const [interrupt] = (getRunOutcome(asked.events.at(-1)) as any).interrupts;

  // A new client on the same thread (a reloaded page): it has no messages and no state.
  const reloaded = agent(server, threadId);
  const resumed = await run(reloaded, { resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }] });
  expect(resumed.error).toBeUndefined();
  expect(resumed.types.slice(0, 3)).toEqual(["RUN_STARTED", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT"]);
  const state = resumed.events.find((e) => e.type === "STATE_SNAPSHOT").snapshot;
  expect(state.pendingApprovals.map((a: any) => a.id)).toEqual([interrupt.id]);
  expect(state.conversationId).toBe(threadId);
  // The thread as it was (the request, the call) and as it went on (the result, the answer).
  const roles = reloaded.messages.map((m: any) => m.role);
  expect(reloaded.messages[0]).toMatchObject({ role: "user", content: "refund order 1001" });
  expect(reloaded.messages.some((m: any) => m.toolCalls?.[0]?.id === interrupt.toolCallId)).toBe(true);
  expect(roles).toContain("tool");
  expect(roles.at(-1)).toBe("assistant");
  // Each message once: the snapshot's ids are the live events' ids.
  const ids = reloaded.messages.map((m: any) => m.id);
  expect(new Set(ids).size).toBe(ids.length);
});

testWithAgents(AGENTS)("a reloaded client is given the open interrupt as its run's outcome, and the thread keeps the client's own message id in place", async ({ server }) => {
  const threadId = randomUUID();
  const first = agent(server, threadId);
  first.messages.push({ id: "m-local-1", role: "user", content: "refund order 1001" });
  const asked = await run(first);
  expect(asked.error).toBeUndefined();
  const [interrupt] = (getRunOutcome(asked.events.at(-1)) as any).interrupts;
  expect(first.pendingInterrupts.map((i) => i.id)).toEqual([interrupt.id]);

  // A reloaded page: a new client on the thread, with no messages and no interrupts of its own,
  // runs with no new message. It gets the thread as a snapshot and the open interrupt as the
  // run's outcome, where the client keeps it.
  const reloaded = agent(server, threadId);
  expect(reloaded.pendingInterrupts).toEqual([]);
  const back = await run(reloaded);
  expect(back.error).toBeUndefined();
  expect(back.types).toEqual(["RUN_STARTED", "MESSAGES_SNAPSHOT", "STATE_SNAPSHOT", "RUN_FINISHED"]);
  expect(getRunOutcome(back.events.at(-1))!.type).toBe("interrupt");
  expect(reloaded.pendingInterrupts).toHaveLength(1);
  expect(reloaded.pendingInterrupts[0]).toMatchObject({ id: interrupt.id, reason: "tool_approval", toolCallId: interrupt.toolCallId });
  // The user's message under the id its first client gave it, once, before the call it asked for.
  const users = reloaded.messages.filter((m: any) => m.role === "user");
  expect(users.map((m: any) => m.id)).toEqual(["m-local-1"]);
  expect(reloaded.messages[0]).toMatchObject({ id: "m-local-1", role: "user", content: "refund order 1001" });
  expect(reloaded.messages.findIndex((m: any) => m.toolCalls?.[0]?.id === interrupt.toolCallId)).toBeGreaterThan(0);
  // Nothing was decided.
  const auth = { Authorization: `Bearer ${token(server, "alice")}` };
  expect(((await (await fetch(`${server.url}/api/approvals/${interrupt.id}`, { headers: auth })).json()) as any).state).toBe("pending");

  // The first client, which holds its own messages, resumes: the client's merge of the run's
  // MESSAGES_SNAPSHOT keeps "m-local-1" where it was (not dropped and appended again under
  // another id), and the call's result and the answer follow it.
  const resumed = await run(first, { resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }] });
  expect(resumed.error).toBeUndefined();
  expect(resumed.types.slice(0, 2)).toEqual(["RUN_STARTED", "MESSAGES_SNAPSHOT"]);
  expect(getRunOutcome(resumed.events.at(-1))!.type).toBe("success");
  expect(first.pendingInterrupts).toEqual([]);
  const ids = first.messages.map((m: any) => m.id);
  expect(first.messages.filter((m: any) => m.role === "user").map((m: any) => m.id)).toEqual(["m-local-1"]);
  expect(ids[0]).toBe("m-local-1");
  const call = first.messages.findIndex((m: any) => m.toolCalls?.[0]?.id === interrupt.toolCallId);
  const result = first.messages.findIndex((m: any) => m.role === "tool" && m.toolCallId === interrupt.toolCallId);
  expect(0 < call && call < result).toBe(true);
  expect(first.messages.at(-1)!.role).toBe("assistant");
  expect(new Set(ids).size).toBe(ids.length);

  // A second message on the thread: the client's merge of that run's MESSAGES_SNAPSHOT keeps it
  // under its own id, once, after the first turn's answer and before the call it asks for.
  const answered = first.messages.length;
  first.messages.push({ id: "m-local-2", role: "user", content: "refund order 1002" });
  const second = await run(first);
  expect(second.error).toBeUndefined();
  const [next] = (getRunOutcome(second.events.at(-1)) as any).interrupts;
  expect(first.messages.filter((m: any) => m.role === "user").map((m: any) => m.id)).toEqual(["m-local-1", "m-local-2"]);
  const asking = first.messages.findIndex((m: any) => m.id === "m-local-2");
  expect(asking).toBe(answered);
  expect(first.messages.findIndex((m: any) => m.toolCalls?.[0]?.id === next.toolCallId)).toBeGreaterThan(asking);
});
