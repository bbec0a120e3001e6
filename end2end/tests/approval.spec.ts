import { test, expect, newChat, say, cards, waitForHydration, logIn } from "./fixtures";

test("approving a refund: pending card, Approve, completed, the order really changed", async ({ page, server }) => {
  await newChat(page);
  await say(page, "refund order 1001");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await expect(page).toHaveTitle("(1) Countersign");
  await expect(card.locator(".tool-name")).toHaveText("process_refund");
  await expect(card.locator(".time-left")).toHaveText(/^[45]:\d\d$/);
  await expect(page.locator(".composer-status")).toHaveText("Waiting for your decision on 1 tool call");
  await expect(page.locator("#composer-input")).toBeDisabled();

  await card.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(card).toHaveAttribute("data-status", "succeeded");
  await expect(card.getByRole("button", { name: "Approve", exact: true })).toHaveCount(0);
  await expect(page.locator(".bubble-assistant").last()).toContainText("Refunded $249.00 on order 1001");
  await expect(page).toHaveTitle("Countersign");
  await expect(page.locator("#composer-input")).toBeEnabled();

  const order = await (await page.request.get(`${server.url}/api/orders/1001`)).json();
  expect(order.status).toBe("refunded");
});

/** A slow link: while held, a page's HTML arrives and its WASM client waits until `release()`. */
async function slowWasm(page: import("@playwright/test").Page) {
  let held = Promise.resolve();
  const link = { release: () => {}, hold: () => (held = new Promise<void>((resolve) => (link.release = resolve))) };
  await page.route("**/*.wasm", async (route) => {
    await held;
    await route.continue();
  });
  return link;
}

test("before the page is hydrated a decision posts its form and comes back; editing waits for the client", async ({ page }) => {
  await newChat(page);
  await say(page, "refund order 1001");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  const url = page.url();

  const link = await slowWasm(page);
  link.hold();
  await page.reload({ waitUntil: "domcontentloaded" });
  await expect(page.locator("#hydration-marker")).toHaveAttribute("data-hydrated", "false");
  // Editing needs the client; deciding does not (server/src/forms.rs).
  await expect(card.getByRole("button", { name: "Edit" })).toBeDisabled();
  const approve = card.getByRole("button", { name: "Approve", exact: true });
  await expect(approve).toBeEnabled();
  await approve.click();
  await page.waitForLoadState("domcontentloaded");
  expect(page.url()).toBe(url);
  await expect(card).not.toHaveAttribute("data-status", "pending_approval");
  await expect(page.locator("#hydration-marker")).toHaveAttribute("data-hydrated", "false");
  link.release();
  await waitForHydration(page);
  await expect(card).toHaveAttribute("data-status", "succeeded");

  // A form of another page: the queue's "Away?" delegation (its <details> opens without script).
  link.hold();
  await page.goto("/approvals", { waitUntil: "domcontentloaded" });
  await page.locator(".away > summary").click();
  const delegate = page.getByRole("button", { name: "Delegate" });
  await expect(delegate).toBeDisabled();
  link.release();
  await waitForHydration(page);
  await expect(delegate).toBeEnabled();
});

test("rejecting with a reason: rejected badge, the answer mentions the reason", async ({ page, server }) => {
  await newChat(page);
  await say(page, "cancel order 1003");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await card.getByRole("button", { name: "Reject", exact: true }).click();
  await card.getByLabel("Reason (optional, the agent sees it)").fill("customer called back");
  await card.getByRole("button", { name: "Confirm reject" }).click();
  await expect(card).toHaveAttribute("data-status", "rejected");
  await expect(card.locator(".decision")).toHaveText("Rejected by alice: customer called back");
  await expect(page.locator(".bubble-assistant").last()).toContainText("customer called back");
  const order = await (await page.request.get(`${server.url}/api/orders/1003`)).json();
  expect(order.status).toBe("open");
});

test("keyboard: a approves the focused card, r opens reject", async ({ page }) => {
  await newChat(page);
  await say(page, "cancel order 1003 and 1005");
  await expect(cards(page)).toHaveCount(2);
  const [first, second] = [cards(page).nth(0), cards(page).nth(1)];
  await expect(first).toHaveAttribute("data-status", "pending_approval");
  await first.focus();
  await page.keyboard.press("a");
  await expect(first).toHaveAttribute("data-status", "succeeded");
  await second.focus();
  await page.keyboard.press("r");
  const reason = second.getByLabel("Reason (optional, the agent sees it)");
  await expect(reason).toBeFocused();
  await reason.fill("not this one");
  await page.keyboard.press("Enter");
  await expect(second).toHaveAttribute("data-status", "rejected");
  await expect(page.locator(".bubble-assistant").last()).toContainText("not this one");
});

test("Approve All runs both calls; a mixed second turn continues and the composer works", async ({ page }) => {
  await newChat(page);
  await say(page, "refund order 1001 and 1002");
  await expect(cards(page)).toHaveCount(2);
  await expect(page).toHaveTitle("(2) Countersign");
  const bar = page.locator(".batch-bar");
  await expect(bar).toContainText("2 calls wait for your decision");
  await page.screenshot({ path: "screenshots/pending-approve-all.png" });
  await bar.getByRole("button", { name: "Approve All" }).click();
  await expect(cards(page).nth(0)).toHaveAttribute("data-status", "succeeded");
  await expect(cards(page).nth(1)).toHaveAttribute("data-status", "succeeded");
  await expect(bar).toHaveCount(0);

  await expect(page.locator("#composer-input")).toBeEnabled();
  await say(page, "cancel order 1003 and 1005");
  await expect(cards(page)).toHaveCount(4);
  await cards(page).nth(2).getByRole("button", { name: "Approve", exact: true }).click();
  await expect(cards(page).nth(2)).toHaveAttribute("data-status", "succeeded");
  await cards(page).nth(3).getByRole("button", { name: "Reject", exact: true }).click();
  await cards(page).nth(3).getByRole("button", { name: "Confirm reject" }).click();
  await expect(cards(page).nth(3)).toHaveAttribute("data-status", "rejected");
  await expect(page.locator("#composer-input")).toBeEnabled();
  await say(page, "look up order 1004");
  await expect(cards(page)).toHaveCount(5);
  await expect(cards(page).nth(4)).toHaveAttribute("data-status", "succeeded");
  await page.locator(".thread").screenshot({ path: "screenshots/resolved.png" });
});

test("reload while pending keeps the card pending and working; reload after decision shows it resolved once", async ({ page }) => {
  await newChat(page);
  await say(page, "cancel order 1003 and 1005");
  await expect(cards(page)).toHaveCount(2);
  await expect(cards(page).nth(1)).toHaveAttribute("data-status", "pending_approval");

  await page.reload();
  await expect(cards(page)).toHaveCount(2);
  await expect(cards(page).nth(0)).toHaveAttribute("data-status", "pending_approval");
  await waitForHydration(page);
  await cards(page).nth(0).getByRole("button", { name: "Approve", exact: true }).click();
  await expect(cards(page).nth(0)).toHaveAttribute("data-status", "succeeded");
  await cards(page).nth(1).getByRole("button", { name: "Reject", exact: true }).click();
  await cards(page).nth(1).getByRole("button", { name: "Confirm reject" }).click();
  await expect(cards(page).nth(1)).toHaveAttribute("data-status", "rejected");
  await expect(page.locator(".bubble-assistant").last()).toContainText("Canceled order 1003");

  await page.reload();
  await expect(cards(page)).toHaveCount(2);
  await expect(cards(page).nth(0)).toHaveAttribute("data-status", "succeeded");
  await expect(cards(page).nth(1)).toHaveAttribute("data-status", "rejected");
  await expect(page.getByRole("button", { name: "Approve", exact: true })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Reject", exact: true })).toHaveCount(0);
  // One user bubble, the plan and the answer: no bubble for the decisions.
  await expect(page.locator(".bubble-user")).toHaveCount(1);
  await expect(page.locator(".bubble-assistant")).toHaveCount(2);
});

test("the server-rendered page already shows every card state before any script runs", async ({ browser, server }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  await logIn(context, server, "alice");
  const api = context.request;
  const conversation = await (await api.post(`${server.url}/api/conversations`, { data: {} })).json();
  await api.post(`${server.url}/api/conversations/${conversation.id}/messages`, { data: { text: "cancel order 1003" } });
  await expect.poll(async () => (await (await api.get(`${server.url}/api/approvals`)).json()).length).toBe(1);
  const page = await context.newPage();
  await page.goto(`${server.url}/c/${conversation.id}`);
  await expect(cards(page).first()).toHaveAttribute("data-status", "pending_approval");
  await expect(page.getByRole("button", { name: "Approve", exact: true })).toBeVisible();
  await context.close();
});

test("Always allow: later calls of the tool run without a card, until the grant is revoked", async ({ page }) => {
  await newChat(page);
  await say(page, "refund $1 on order 1004");
  const first = cards(page).first();
  await expect(first).toHaveAttribute("data-status", "pending_approval");
  await first.getByLabel("Always allow process_refund in this chat").check();
  await first.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(first).toHaveAttribute("data-status", "succeeded");
  const grants = page.getByRole("region", { name: "Always allowed in this chat" });
  await expect(grants).toContainText("process_refund");

  await say(page, "refund $2 on order 1004");
  await expect(cards(page)).toHaveCount(2);
  await expect(cards(page).nth(1)).toHaveAttribute("data-status", "succeeded");
  await expect(cards(page).nth(1).locator(".granted")).toContainText("alice");

  await grants.getByRole("button", { name: "Revoke" }).click();
  await expect(grants).toHaveCount(0);
  await say(page, "refund $3 on order 1004");
  await expect(cards(page)).toHaveCount(3);
  await expect(cards(page).nth(2)).toHaveAttribute("data-status", "pending_approval");
});
