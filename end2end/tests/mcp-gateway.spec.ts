import { expect } from "@playwright/test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import * as v2 from "@modelcontextprotocol/client";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { testWithAgents, cards, waitForHydration, REFUNDS_GATE, type Server } from "./fixtures";

// The MCP approval gateway (/mcp/<agent>) driven by the official TypeScript MCP SDK clients (the
// handshake era's @modelcontextprotocol/sdk and 2026-07-28's @modelcontextprotocol/client), with a
// real npm MCP server upstream (@modelcontextprotocol/server-filesystem): reads run at once, writes
// wait for a person, in the browser's chat and queue like the agent's own calls; a call whose
// arguments break the tool's schema is a tool error naming each problem, and asks no one.
const ROOT = realpathSync(mkdtempSync(path.join(tmpdir(), "countersign-mcp-gateway-")));
writeFileSync(path.join(ROOT, "notes.txt"), "milk, eggs");
const FILESYSTEM = path.resolve(__dirname, "../node_modules/.bin/mcp-server-filesystem");

const AGENTS = `
[[mcp_servers]]
name = "files"
command = "${FILESYSTEM}"
args = ["${ROOT}"]

[[agents]]
name = "files"
tools = ["get_order"]

[[agents.mcp]]
server = "files"
tools = ["read_text_file", "write_file"]
require_approval = ["write_file"]
`;

function token(server: Server, user: string, name: string): string {
  const made = spawnSync(process.env.COUNTERSIGN_BIN!, ["token", "create", "--user", user, "--name", name], {
    env: { ...process.env, COUNTERSIGN_DATA_DIR: server.dataDir },
  });
  if (made.status !== 0) throw new Error(`token create: ${made.stderr}`);
  return made.stdout.toString().trim();
}

async function connect(server: Server, bearer: string, agent = "files"): Promise<Client> {
  const client = new Client({ name: "countersign-e2e", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/${agent}`), {
    requestInit: { headers: { Authorization: `Bearer ${bearer}` } },
  });
  await client.connect(transport);
  return client;
}

/** The one pending approval of the user, through the REST API. */
async function pendingApproval(server: Server, bearer: string): Promise<any> {
  let found: any;
  await expect
    .poll(async () => {
      const list = (await (await fetch(`${server.url}/api/approvals`, { headers: { Authorization: `Bearer ${bearer}` } })).json()) as any;
      found = list[0];
      return found?.tool;
    })
    .toBe("write_file");
  return found;
}

/** Decides an approval through the REST API as the token's user; returns the HTTP status. */
async function decide(server: Server, bearer: string, id: string, action: "approve" | "reject", body: object = {}): Promise<number> {
  const answer = await fetch(`${server.url}/api/approvals/${id}/${action}`, {
    method: "POST",
    headers: { Authorization: `Bearer ${bearer}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  return answer.status;
}

const text = (result: any) => (result.content as any[]).map((c) => c.text).join("\n");

testWithAgents(AGENTS)("an MCP client's read runs at once; its write waits for approval in the chat, with progress, and runs once approved", async ({ page, server }) => {
  const alice = token(server, "alice", "laptop");
  const client = await connect(server, alice);

  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(["get_order", "read_text_file", "write_file"]);
  expect(tools.find((t) => t.name === "read_text_file")!.annotations?.readOnlyHint).toBe(true);

  const read = await client.callTool({ name: "read_text_file", arguments: { path: path.join(ROOT, "notes.txt") } });
  expect(read.isError).toBeFalsy();
  expect(text(read)).toBe("milk, eggs");

  // The write waits: the client's own timeout (4 s) is shorter than the wait, but progress
  // notifications every 2 s reset it.
  const target = path.join(ROOT, "approved.txt");
  const progress: any[] = [];
  const write = client.callTool({ name: "write_file", arguments: { path: target, content: "hello" } }, undefined, {
    timeout: 4_000,
    resetTimeoutOnProgress: true,
    maxTotalTimeout: 60_000,
    onprogress: (p) => void progress.push(p),
  });

  // The call shows in alice's chat for this client, as a card waiting for approval.
  await page.goto("/");
  // Named after the client (its clientInfo) and the token it came with.
  await page.getByRole("link", { name: /MCP client “countersign-e2e” \(token “laptop”\) · files/ }).first().click();
  await waitForHydration(page);
  await expect(page.getByText("MCP client “countersign-e2e” asks to run write_file")).toBeVisible();
  const card = cards(page).filter({ hasText: "write_file" });
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await page.waitForTimeout(5_000);
  expect(existsSync(target)).toBe(false);
  await card.getByRole("button", { name: "Approve", exact: true }).click();

  const written = await write;
  expect(written.isError).toBeFalsy();
  expect(text(written)).toContain("Successfully wrote");
  expect(readFileSync(target, "utf8")).toBe("hello");
  expect(progress.length).toBeGreaterThanOrEqual(2);
  // While it waited the notes said so (the last one may already say "running": approval wakes the wait).
  expect(progress.some((p) => String(p.message).includes("waiting for a person"))).toBe(true);
  await expect(card).toHaveAttribute("data-status", "succeeded");
  await client.close();
});

testWithAgents(AGENTS)("a rejection answers the MCP client with the reason; an approval with edited arguments writes the edited content", async ({ server }) => {
  const alice = token(server, "alice", "ide");
  const root = token(server, "root", "admin");
  const client = await connect(server, alice);

  const rejected = path.join(ROOT, "rejected.txt");
  const first = client.callTool({ name: "write_file", arguments: { path: rejected, content: "no" } });
  const approval = await pendingApproval(server, root);
  expect(await decide(server, root, approval.id, "reject", { reason: "not in the shared folder" })).toBe(200);
  const refused = await first;
  expect(refused.isError).toBe(true);
  expect(text(refused)).toBe("Rejected by root in Countersign: not in the shared folder");
  expect(existsSync(rejected)).toBe(false);

  const edited = path.join(ROOT, "edited.txt");
  const second = client.callTool({ name: "write_file", arguments: { path: edited, content: "draft" } });
  const next = await pendingApproval(server, root);
  expect(await decide(server, root, next.id, "approve", { args: { path: edited, content: "final" } })).toBe(200);
  const done = await second;
  expect(done.isError).toBeFalsy();
  expect(readFileSync(edited, "utf8")).toBe("final");
  await client.close();
});

testWithAgents(AGENTS)("a call whose MCP client cancelled it is stopped: no later approval runs it, and its card says why", async ({ server }) => {
  const alice = token(server, "alice", "flaky");
  const client = await connect(server, alice);
  const target = path.join(ROOT, "abandoned.txt");
  const abort = new AbortController();
  const call = client.callTool({ name: "write_file", arguments: { path: target, content: "late" } }, undefined, { signal: abort.signal });
  const approval = await pendingApproval(server, alice);
  // The SDK sends `notifications/cancelled` for the request: the gateway stops the call.
  abort.abort();
  await expect(call).rejects.toThrow();
  await client.close();

  // No one can approve it any more (409), the chat says the client stopped waiting, nothing is written.
  const root = token(server, "root", "admin");
  const conversation = approval.conversation_id;
  await expect
    .poll(async () => {
      const detail = (await (await fetch(`${server.url}/api/conversations/${conversation}`, { headers: { Authorization: `Bearer ${alice}` } })).json()) as any;
      return JSON.stringify(detail);
    })
    .toContain("which stopped waiting");
  expect(await decide(server, root, approval.id, "approve")).toBe(409);
  expect(existsSync(target)).toBe(false);
});

testWithAgents(AGENTS)("a revoked token's waiting call ends with an error and is stopped for good; two first calls at once make one chat", async ({ server }) => {
  const alice = token(server, "alice", "revoked-later");
  const api = token(server, "alice", "api");
  const root = token(server, "root", "admin");
  const client = await connect(server, alice);
  const chats = async () =>
    ((await (await fetch(`${server.url}/api/conversations`, { headers: { Authorization: `Bearer ${api}` } })).json()) as any[]).filter((c) =>
      c.title.includes("revoked-later"),
    ).length;

  // Two first calls at once, as an agent that reads two files in parallel would make them.
  const notes = path.join(ROOT, "notes.txt");
  const [a, b] = await Promise.all([
    client.callTool({ name: "read_text_file", arguments: { path: notes } }),
    client.callTool({ name: "read_text_file", arguments: { path: notes } }),
  ]);
  expect([text(a), text(b)]).toEqual(["milk, eggs", "milk, eggs"]);
  expect(await chats()).toBe(1);

  const target = path.join(ROOT, "revoked.txt");
  const call = client.callTool({ name: "write_file", arguments: { path: target, content: "late" } });
  const approval = await pendingApproval(server, root);
  const tokens = (await (await fetch(`${server.url}/api/tokens`, { headers: { Authorization: `Bearer ${api}` } })).json()) as any[];
  const id = tokens.find((t) => t.name === "revoked-later").id;
  const revoke = await fetch(`${server.url}/api/tokens/${id}/revoke`, { method: "POST", headers: { Authorization: `Bearer ${api}` } });
  expect(revoke.status).toBe(204);
  await expect(call).rejects.toThrow(/revoked/);

  // No one waits for the call any more: it is stopped, no later approval runs it, the write never happens.
  await expect
    .poll(async () => JSON.stringify(await (await fetch(`${server.url}/api/conversations/${approval.conversation_id}`, { headers: { Authorization: `Bearer ${api}` } })).json()))
    .toContain("which stopped waiting");
  expect(await decide(server, root, approval.id, "approve")).toBe(409);
  expect(existsSync(target)).toBe(false);
});

testWithAgents(AGENTS)("bad MCP requests get MCP's own errors and change nothing", async ({ server }) => {
  const alice = token(server, "alice", "probe");
  const client = await connect(server, alice);
  const conversations = async () =>
    ((await (await fetch(`${server.url}/api/conversations`, { headers: { Authorization: `Bearer ${alice}` } })).json()) as any[]).length;
  const before = await conversations();

  // A tool outside the agent's allow-list (the upstream server has it, the agent does not).
  await expect(client.callTool({ name: "move_file", arguments: { source: "a", destination: "b" } })).rejects.toThrow(/no tool "move_file" here/);
  // A model-only tool is not offered either.
  await expect(client.callTool({ name: "ask_user", arguments: { question: "?" } })).rejects.toThrow(/no tool "ask_user" here/);
  expect(await conversations()).toBe(before);
  await client.close();

  // Malformed JSON-RPC and a missing token, over plain HTTP.
  const post = (body: string, headers: Record<string, string>) =>
    fetch(`${server.url}/mcp/files`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers },
      body,
    });
  const malformed = await post("{not json", { Authorization: `Bearer ${alice}` });
  expect(malformed.status).toBe(400);
  expect(((await malformed.json()) as any).error.code).toBe(-32700);
  // A body over the server's limit (64 KiB by default) is refused before it is read in full.
  const huge = await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad: "x".repeat(200_000) } }), {
    Authorization: `Bearer ${alice}`,
  });
  expect(huge.status).toBe(413);
  expect(((await huge.json()) as any).error.code).toBe(-32600);
  const notMessage = await post(JSON.stringify({ hello: "world" }), { Authorization: `Bearer ${alice}` });
  expect(notMessage.status).toBe(400);
  expect(((await notMessage.json()) as any).error.code).toBe(-32600);
  const anonymous = await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), {});
  expect(anonymous.status).toBe(401);
  expect(((await anonymous.json()) as any).error.message).toContain("API token");
  const forged = await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), { Authorization: "Bearer not-a-token" });
  expect(forged.status).toBe(401);
  expect(await conversations()).toBe(before);
});

testWithAgents(AGENTS)("a 2026-07-28 client asks its user through an elicitation; a dismissed question leaves the call to the chat", async ({ page, server }) => {
  const alice = token(server, "alice", "modern");
  const answers: ("accept" | "cancel")[] = ["accept", "cancel"];
  const asked: string[] = [];
  const client = new v2.Client(
    { name: "countersign-e2e-2026", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  client.setRequestHandler("elicitation/create", async (request: any) => {
    asked.push(request.params.message);
    const action = answers.shift()!;
    return action === "accept" ? { action, content: { approve: true } } : { action };
  });
  await client.connect(
    new v2.StreamableHTTPClientTransport(new URL(`${server.url}/mcp/files`), { requestInit: { headers: { Authorization: `Bearer ${alice}` } } }),
  );
  expect(client.getProtocolEra()).toBe("modern");
  const read = await client.callTool({ name: "read_text_file", arguments: { path: path.join(ROOT, "notes.txt") } });
  expect(text(read)).toBe("milk, eggs");

  // Alice's own client asks her, and her yes runs the write.
  const first = path.join(ROOT, "elicited.txt");
  const written = await client.callTool({ name: "write_file", arguments: { path: first, content: "asked" } });
  expect(written.isError).toBeFalsy();
  expect(readFileSync(first, "utf8")).toBe("asked");
  expect(asked[0]).toMatch(/^Approve: .*elicited\.txt/);

  // Dismissed: the call waits for someone (held, with progress) and she approves it in the chat.
  const second = path.join(ROOT, "dismissed.txt");
  // A short timeout that only the server's progress keeps alive (the SDK asks for progress only
  // with an `onprogress` handler).
  const progress: string[] = [];
  const waiting = client.callTool({ name: "write_file", arguments: { path: second, content: "later" } }, {
    timeout: 4_000, resetTimeoutOnProgress: true, maxTotalTimeout: 60_000, onprogress: (p: any) => progress.push(String(p.message ?? "")),
  });
  await page.goto("/");
  await page.getByRole("link", { name: /MCP client “countersign-e2e-2026”/ }).first().click();
  await waitForHydration(page);
  const card = cards(page).filter({ hasText: "dismissed.txt" });
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  expect(existsSync(second)).toBe(false);
  await card.getByRole("button", { name: "Approve", exact: true }).click();
  const done = await waiting;
  expect(done.isError).toBeFalsy();
  expect(readFileSync(second, "utf8")).toBe("later");
  expect(asked).toHaveLength(2);
  expect(progress.some((m) => m.startsWith("waiting for a person to approve or reject"))).toBe(true);
  await client.close();
});

testWithAgents(REFUNDS_GATE)("a call with bad arguments is a tool error naming each problem in its text and structured content, in both SDKs; no one is asked", async ({ server }) => {
  const alice = token(server, "alice", "bad-args");
  const legacy = await connect(server, alice, "support");
  const modern = new v2.Client({ name: "countersign-e2e-2026", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  await modern.connect(
    new v2.StreamableHTTPClientTransport(new URL(`${server.url}/mcp/support`), { requestInit: { headers: { Authorization: `Bearer ${alice}` } } }),
  );
  expect(modern.getProtocolEra()).toBe("modern");
  type Sdk = {
    listTools: () => Promise<{ tools: any[] }>;
    callTool: (params: { name: string; arguments: Record<string, unknown> }) => Promise<any>;
  };
  const sdks: [string, Sdk][] = [
    ["@modelcontextprotocol/sdk", { listTools: () => legacy.listTools(), callTool: (params) => legacy.callTool(params) }],
    ["@modelcontextprotocol/client", { listTools: () => modern.listTools(), callTool: (params) => modern.callTool(params) }],
  ];
  for (const [sdk, client] of sdks) {
    // No tool declares an outputSchema, so neither SDK checks the error's structured content against one.
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name), sdk).toContain("process_refund");
    expect(tools.filter((t) => t.outputSchema !== undefined), sdk).toEqual([]);

    const wrong = await client.callTool({ name: "process_refund", arguments: { order_id: "x" } });
    expect(wrong.isError, sdk).toBe(true);
    expect(text(wrong), sdk).toBe("invalid arguments: /order_id: must be an integer");
    expect(wrong.structuredContent, sdk).toEqual({ error: "invalid arguments", details: [{ path: "/order_id", message: "must be an integer" }] });

    // A problem with the arguments as a whole has no path.
    const missing = await client.callTool({ name: "process_refund", arguments: {} });
    expect(missing.isError, sdk).toBe(true);
    expect(text(missing), sdk).toBe("invalid arguments: order_id is required");
    expect(missing.structuredContent.details, sdk).toEqual([{ path: "", message: "order_id is required" }]);
  }
  await legacy.close();
  await modern.close();

  // Refused before any gate: nothing waits for a person.
  const pending = (await (await fetch(`${server.url}/api/approvals?status=pending`, { headers: { Authorization: `Bearer ${alice}` } })).json()) as any[];
  expect(pending).toEqual([]);
});
