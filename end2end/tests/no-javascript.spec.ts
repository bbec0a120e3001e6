// With JavaScript off, a person logs in, opens a chat, sees its cards and decides each kind of
// call there and in the queue: every decision is a plain HTML form (server/src/forms.rs) that
// comes back to the same page.
import { testWithAgents, expect, REFUNDS_GATE, PASSWORD, allowConsole } from "./fixtures";
import type { APIRequestContext, Page } from "@playwright/test";

// Refunds wait for a person, and so does each turn's final answer.
const test = testWithAgents(`${REFUNDS_GATE.replace('"process_refund"]\n', '"process_refund", "ask_user"]\n')}
[[agents.gates]]
name = "answers"
kind = "final_response"
`);

/** Reloads `page` until `check` passes (nothing on a page without JavaScript changes by itself). */
async function reloadUntil(page: Page, check: () => Promise<void>): Promise<void> {
  await expect(async () => {
    await page.reload();
    await check();
  }).toPass({ timeout: 15_000 });
}

async function say(api: APIRequestContext, url: string, conversation: string, text: string): Promise<void> {
  const sent = await api.post(`${url}/api/conversations/${conversation}/messages`, { data: { text } });
  expect(sent.ok()).toBe(true);
}

test("with JavaScript off, a person logs in and decides every kind of call from the chat and the queue", async ({ page, browser, server }) => {
  test.setTimeout(90_000);
  // Chromium's note that the page preloads its WASM, which no script is there to use.
  allowConsole(/was preloaded using link preload but not used/);
  const api = page.context().request;
  const conversation = (await (await api.post(`${server.url}/api/conversations`, { data: {} })).json()).id;
  await say(api, server.url, conversation, "refund an order");

  const context = await browser.newContext({ javaScriptEnabled: false });
  const alice = await context.newPage();
  // Logging in: the login form, typed key by key, then back to the chat.
  await alice.goto(`${server.url}/c/${conversation}`);
  await expect(alice).toHaveURL(/\/login\?next=/);
  await alice.getByLabel("User name").pressSequentially("alice");
  await alice.getByLabel("Password").pressSequentially(PASSWORD);
  await alice.keyboard.press("Enter");
  await expect(alice).toHaveURL(`${server.url}/c/${conversation}`);
  const cards = alice.locator(".tool-card");

  // A question: typed into its box, sent with Enter.
  const question = alice.locator(".question-card");
  await reloadUntil(alice, () => expect(question).toHaveAttribute("data-status", "pending_approval"));
  await question.getByLabel("Your answer").pressSequentially("1002");
  await alice.keyboard.press("Enter");
  await expect(alice).toHaveURL(`${server.url}/c/${conversation}`);
  await expect(question.locator(".decision")).toHaveText("Answered: 1002");

  // The refund it led to, approved with one click.
  const refund = cards.filter({ hasText: "order 1002" }).first();
  await reloadUntil(alice, () => expect(refund).toHaveAttribute("data-status", "pending_approval"));
  await refund.getByRole("button", { name: "Approve", exact: true }).click();
  await reloadUntil(alice, () => expect(refund).toHaveAttribute("data-status", "succeeded"));

  // The final answer waits for review: rejected with a reason, written on its own page.
  const answer = alice.locator('.tool-card[data-status="pending_approval"]').filter({ has: alice.locator(".draft-answer") });
  await reloadUntil(alice, () => expect(answer).toHaveCount(1));
  await answer.getByRole("button", { name: "Reject", exact: true }).click();
  await expect(alice.getByRole("heading", { name: "Reject this call" })).toBeVisible();
  await alice.getByLabel(/^Reason/).pressSequentially("say which order");
  await alice.getByRole("button", { name: "Confirm reject" }).click();
  await expect(alice).toHaveURL(`${server.url}/c/${conversation}`);
  const rejected = await (await api.get(`${server.url}/api/approvals?status=rejected`)).json();
  expect(rejected.map((a: { reason: string }) => a.reason)).toContain("say which order");

  // Two refunds in one turn: Approve All.
  await expect
    .poll(async () => (await (await api.get(`${server.url}/api/approvals`)).json()).length, { timeout: 15_000 })
    .toBe(1);
  const pendingAnswer = (await (await api.get(`${server.url}/api/approvals`)).json())[0];
  await api.post(`${server.url}/api/approvals/${pendingAnswer.id}/approve`, { data: {} });
  await expect.poll(async () => (await (await api.get(`${server.url}/api/approvals`)).json()).length).toBe(0);
  await say(api, server.url, conversation, "refund order 1001 and 1003");
  const all = alice.getByRole("button", { name: "Approve All" });
  await reloadUntil(alice, () => expect(all).toBeVisible());
  await all.click();
  await expect(alice).toHaveURL(`${server.url}/c/${conversation}`);
  for (const order of [1001, 1003]) {
    await expect.poll(async () => (await (await api.get(`${server.url}/api/orders/${order}`)).json()).refunded).toBeGreaterThan(0);
  }

  // The queue, as the admin: the final answer of that turn, approved from its row.
  const adminContext = await browser.newContext({ javaScriptEnabled: false });
  const admin = await adminContext.newPage();
  await admin.goto(`${server.url}/login?next=/approvals`);
  await admin.getByLabel("User name").pressSequentially("root");
  await admin.getByLabel("Password").pressSequentially(PASSWORD);
  await admin.keyboard.press("Enter");
  await expect(admin).toHaveURL(`${server.url}/approvals`);
  const row = admin.locator(".queue-item").first();
  await reloadUntil(admin, () => expect(row).toBeVisible());
  await row.locator(".queue-row > summary").click();
  await row.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(admin).toHaveURL(`${server.url}/approvals`);
  await reloadUntil(admin, () => expect(admin.locator(".queue-item")).toHaveCount(0));
  await expect.poll(async () => (await (await api.get(`${server.url}/api/approvals`)).json()).length).toBe(0);
  await context.close();
  await adminContext.close();
});
