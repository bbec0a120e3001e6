import { expect } from "@playwright/test";
import { logIn, say, cards, waitForHydration, test, testWithAgents, newChat, REFUNDS_GATE, allowConsole, watchCards, cardsRemoved, typeKeyByKey, chatWaiting } from "./fixtures";

/** The support agent with one gate on refunds, and `rules` (TOML lines) for that gate. */
const refundsGate = (rules: string) => `${REFUNDS_GATE}${rules}`;

// A gate that takes refunds as proposed or not at all, and wants a reason for a no.
const AGENTS = refundsGate(`
require_reason = true
allow_modification = false
`);

testWithAgents(AGENTS)("a gate's rules show on the card: no Edit, and Reject asks for a reason before it sends", async ({ page }) => {
  await newChat(page);
  await say(page, "refund order 1001");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await expect(card.getByRole("button", { name: "Approve", exact: true })).toBeVisible();
  await expect(card.getByRole("button", { name: "Edit" })).toHaveCount(0);
  // Why it is risky: it cannot be undone, and what would happen.
  // Said once: the headline names the refund, the consequences say only what follows.
  await expect(card.locator(".assessment .consequences")).toHaveText("Cannot be undone: The money goes back to the customer and cannot be called back.");
  await expect(card.locator(".summary")).toContainText("Refund $249.00");
  await expect(card.locator(".assessment")).not.toContainText("Refund $249.00");
  await expect(card.locator(".assessment .factors")).toHaveText("Why it is risky: moves money");

  await card.getByRole("button", { name: "Reject", exact: true }).click();
  const reason = card.getByLabel(/Reason \(required/);
  await expect(reason).toBeVisible();
  await card.screenshot({ path: "screenshots/reason-required.png" });
  // An empty reason is not sent: the field says it is required and the card stays pending.
  await card.getByRole("button", { name: "Confirm reject" }).click();
  expect(await reason.evaluate((el: HTMLInputElement) => el.validity.valueMissing)).toBe(true);
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await reason.fill("the customer asked for store credit");
  await card.getByRole("button", { name: "Confirm reject" }).click();
  await expect(card).toHaveAttribute("data-status", "rejected");
  await expect(card.locator(".decision")).toContainText("the customer asked for store credit");
});

test("a finished turn that asked people says what they decided and how long it took", async ({ page }) => {
  await newChat(page);
  await say(page, "cancel order 1003 and 1005");
  await expect(cards(page)).toHaveCount(2);
  // Both wait side by side for 1.5 s: the turn waited 1.5 s, not twice that.
  await page.waitForTimeout(1_500);
  await page.getByRole("button", { name: "Approve All" }).click();
  const summary = page.locator(".turn-summary");
  await expect(summary).toHaveText(/^2 approvals: 2 approved · waited .+ for decisions · the turn took .+$/);
  const [, waited, took] = (await summary.textContent())!.match(/waited (\d+) seconds? for decisions · the turn took (\d+) seconds?/)!;
  expect(Number(waited)).toBeLessThanOrEqual(Number(took));
  expect(Number(waited)).toBeLessThan(3);
  await page.locator(".thread").screenshot({ path: "screenshots/turn-summary.png" });
  // The same line after a reload (folded from the stored events on the server).
  await page.reload();
  await expect(page.locator(".turn-summary")).toHaveText(/^2 approvals: 2 approved/);
});

// Refunds remind after half a second, once.
const REMINDING = refundsGate(`
reminder_interval_secs = 0.5
max_reminders = 1
`);

testWithAgents(REMINDING)("a waiting card says when its deciders were reminded, live and after a reload, and so do the queue and the tab titles", async ({ page }) => {
  // Alice's queue, open in another tab before the call is made: it hears the reminder live.
  const queue = await page.context().newPage();
  await queue.goto("/approvals");
  await waitForHydration(queue);
  await newChat(page);
  await say(page, "refund order 1001");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await expect(card.locator(".reminder")).toHaveText("Reminder 1 of 1: still waiting for a decision", { timeout: 10_000 });
  await expect(card).toHaveClass(/reminded/);
  await expect(page).toHaveTitle("(1) Reminder · Countersign");
  const row = queue.locator(".queue-item").first();
  await expect(row.locator(".badge.reminded")).toHaveText("Reminder 1");
  await expect(row).toHaveClass(/reminded/);
  await expect(queue).toHaveTitle("(1) Reminder · Approval queue · Countersign");
  await page.reload();
  await expect(cards(page).first().locator(".reminder")).toHaveText("Reminder 1 of 1: still waiting for a decision");
  await expect(page).toHaveTitle("(1) Reminder · Countersign");
});

// Refunds remind two seconds after they are asked, once.
const REMINDING_LATER = refundsGate(`
reminder_interval_secs = 2
max_reminders = 1
`);

testWithAgents(REMINDING_LATER)("in the queue, a reminder changes neither a number nor a reason being typed, nor where the keys go", async ({ page, server }) => {
  test.setTimeout(60_000);
  const queue = await page.context().newPage();
  await queue.goto("/approvals");
  await waitForHydration(queue);
  const alice = page.context().request;
  await chatWaiting(alice, server, "refund order 1001", 1);
  await chatWaiting(alice, server, "refund order 1002", 2);
  const row = (order: number) => queue.locator(".queue-item").filter({ hasText: `order ${order}` });
  await row(1001).locator(".queue-row > summary").click();
  await row(1001).getByRole("button", { name: "Edit" }).click();
  const amount = row(1001).getByLabel(/amount/);
  await amount.focus();
  await typeKeyByKey(queue, amount, "", "12");
  await row(1002).locator(".queue-row > summary").click();
  await row(1002).getByRole("button", { name: "Reject", exact: true }).click();
  const reason = row(1002).getByLabel(/^Reason/);
  await expect(reason).toBeFocused();
  await watchCards(queue);
  await typeKeyByKey(queue, reason, "", "not");
  // Both are reminded while the reason is half written.
  for (const order of [1001, 1002]) await expect(row(order).locator(".badge.reminded")).toHaveText("Reminder 1", { timeout: 10_000 });
  await typeKeyByKey(queue, reason, "not", " now");
  expect(await cardsRemoved(queue), "no row was drawn again for its reminder").toBe(0);
  await amount.focus();
  await queue.keyboard.press("End");
  await typeKeyByKey(queue, amount, "12", "3");
  await expect(row(1001).locator(".key-changes")).toContainText("123");
});

// Four-eyes: refunds need someone other than the person who asked for them.
const FOUR_EYES = refundsGate(`
separate_requester = true
`);

testWithAgents(FOUR_EYES)("a four-eyes gate leaves the requester Reject only, and an admin approves from the queue", async ({ page, browser, server }) => {
  const root = await browser.newContext({ baseURL: server.url });
  try {
    await logIn(root, server, "root");
    await newChat(page);
    await say(page, "refund order 1001");
    const card = cards(page).first();
    await expect(card).toHaveAttribute("data-status", "pending_approval");
    await expect(card.locator(".four-eyes")).toHaveText(
      "Four-eyes: you asked for this call, so someone else must approve it. You can still reject it.",
    );
    await expect(card.getByRole("button", { name: "Approve", exact: true })).toHaveCount(0);
    await expect(card.getByRole("button", { name: "Edit" })).toHaveCount(0);
    await expect(card.getByRole("button", { name: "Reject", exact: true })).toBeVisible();

    // The admin's queue offers Approve; approving there runs the call in alice's chat.
    const queue = await root.newPage();
    await queue.goto("/approvals");
    await waitForHydration(queue);
    const row = queue.locator(".queue-item").first();
    await row.locator(".queue-row > summary").click();
    await expect(row.locator(".four-eyes")).toHaveCount(0);
    await row.getByRole("button", { name: "Approve", exact: true }).click();
    await expect(card).toHaveAttribute("data-status", "succeeded");

    // Two more: the requester's batch bar offers Reject All only, and no approve link is made
    // for them (it could only be refused after the click).
    await say(page, "refund order 1002 and 1004");
    await expect(page.locator('.tool-card[data-status="pending_approval"]')).toHaveCount(2);
    const bar = page.locator(".batch-bar");
    await expect(bar.getByRole("button", { name: "Reject All" })).toBeVisible();
    await expect(bar.getByRole("button", { name: "Approve All" })).toHaveCount(0);
    const pending = await (await page.context().request.get(`${server.url}/api/approvals?status=pending`)).json();
    const issued = await page.context().request.post(`${server.url}/api/approvals/${pending[0].id}/links`, { data: {} });
    expect(issued.status()).toBe(422);
    expect(JSON.stringify(await issued.json())).toContain("four-eyes: alice asked for this call");
    await expect(page.locator('.tool-card[data-status="pending_approval"]')).toHaveCount(2);
  } finally {
    await root.close();
  }
});

// A refunds gate being tried out: it records what it would have stopped and stops nothing.
const SHADOW = refundsGate(`
mode = "shadow"
`);

testWithAgents(SHADOW)("a shadow gate lets the call run and its card says the gate would have asked", async ({ page }) => {
  await newChat(page);
  await say(page, "refund order 1001");
  const card = cards(page).filter({ has: page.locator(".tool-name", { hasText: "process_refund" }) });
  await expect(card).toHaveAttribute("data-status", "succeeded");
  await expect(card.locator(".badge.shadow")).toHaveText("Shadow: refunds would have asked");
  await expect(card.getByRole("button", { name: "Approve", exact: true })).toHaveCount(0);
  await page.reload();
  await expect(cards(page).filter({ has: page.locator(".tool-name", { hasText: "process_refund" }) }).locator(".badge.shadow")).toHaveText(
    "Shadow: refunds would have asked",
  );
  // The queue's Decided tab lists what shadow gates would have stopped.
  await page.goto("/approvals?status=decided");
  await page.getByRole("link", { name: "Shadow hits" }).click();
  await expect(page.locator(".shadow-hits tbody tr")).toHaveCount(1);
  await expect(page.locator(".shadow-hits tbody tr")).toContainText("process_refund");
});

// Who decides: refunds need two approvals, from the finance group (made on the Groups page) or an admin.
const GOVERNED = refundsGate(`
approvers = ["group:finance", "role:admin"]
quorum = 2
`);

testWithAgents(GOVERNED)("an admin makes a group; refunds wait for two of its approvers, and the requester's card says who decides", async ({ page, browser, server }) => {
  // The group naming no one, refused.
  allowConsole(/status of 422/);
  const root = await browser.newContext({ baseURL: server.url });
  const bob = await browser.newContext({ baseURL: server.url });
  try {
    await logIn(root, server, "root");
    await logIn(bob, server, "bob");
    const groups = await root.newPage();
    await groups.goto("/groups");
    await waitForHydration(groups);
    await groups.getByLabel("Name").fill("finance");
    await groups.locator(".new-group").getByLabel("Members").fill("bob");
    await groups.getByRole("button", { name: "Create group" }).click();
    await expect(groups.locator('.group[data-group="finance"] input')).toHaveValue("bob");
    // A member without an account is refused with the reason, and nothing is created.
    await groups.getByLabel("Name").fill("ops");
    await groups.locator(".new-group").getByLabel("Members").fill("nobody");
    await groups.getByRole("button", { name: "Create group" }).click();
    await expect(groups.locator(".new-group .error")).toContainText('no user is named "nobody"');
    await expect(groups.locator(".group")).toHaveCount(1);
    await groups.screenshot({ path: "screenshots/groups.png" });

    await newChat(page);
    await say(page, "refund order 1001");
    const card = cards(page).first();
    await expect(card).toHaveAttribute("data-status", "pending_approval");
    await expect(card.locator(".not-approver")).toHaveText(
      "Waiting for finance or an admin: only they may decide this call (its gate's approvers).",
    );
    await expect(card.locator(".quorum")).toHaveText("Needs 2 approvals from different people; none yet");
    await expect(card.getByRole("button", { name: "Approve", exact: true })).toHaveCount(0);
    await expect(card.getByRole("button", { name: "Reject", exact: true })).toHaveCount(0);
    // The composer does not ask alice for a decision she cannot make.
    await expect(page.locator(".composer-status")).toHaveText("Waiting for finance or an admin to decide 1 tool call");

    // Bob (finance) approves from his queue: one of two.
    const bobQueue = await bob.newPage();
    await bobQueue.goto("/approvals");
    await waitForHydration(bobQueue);
    const bobRow = bobQueue.locator(".queue-item").first();
    await bobRow.locator(".queue-row > summary").click();
    await bobRow.getByRole("button", { name: "Approve", exact: true }).click();
    await expect(card.locator(".quorum")).toHaveText("Approved by bob · 1 of 2 approvals; waiting for 1 more");
    await expect(card).toHaveAttribute("data-status", "pending_approval");
    await card.screenshot({ path: "screenshots/quorum.png" });

    // An admin gives the second approval: the refund runs in alice's chat.
    const rootQueue = await root.newPage();
    await rootQueue.goto("/approvals");
    await waitForHydration(rootQueue);
    const rootRow = rootQueue.locator(".queue-item").first();
    await rootRow.locator(".queue-row > summary").click();
    await expect(rootRow.locator(".quorum")).toHaveText("Approved by bob · 1 of 2 approvals; waiting for 1 more");
    await rootRow.getByRole("button", { name: "Approve", exact: true }).click();
    await expect(card).toHaveAttribute("data-status", "succeeded");
    // Both approvals are named, on the card and in the Decided tab, not only the last.
    await expect(card.locator(".decision")).toHaveText("Approved by bob and root");
    await rootQueue.getByRole("link", { name: "Decided" }).click();
    await expect(rootQueue.locator("table.decided tbody tr").first().locator(".decided-by")).toHaveText("bob and root");
  } finally {
    await root.close();
    await bob.close();
  }
});

// Only finance (bob) decides refunds; bob, away, lets alice decide in his place from his queue page.
const FINANCE_ONLY = `[[groups]]
name = "finance"
members = ["bob"]
${refundsGate(`
approvers = ["group:finance"]
`)}`;

testWithAgents(FINANCE_ONLY)("an approver away lets someone decide in their place, whose card then offers the decision", async ({ page, browser, server }) => {
  const bob = await browser.newContext({ baseURL: server.url });
  try {
    await logIn(bob, server, "bob");
    await newChat(page);
    await say(page, "refund order 1001");
    const card = cards(page).first();
    await expect(card.locator(".not-approver")).toHaveText("Waiting for finance: only they may decide this call (its gate's approvers).");
    await expect(card.getByRole("button", { name: "Approve", exact: true })).toHaveCount(0);

    const queue = await bob.newPage();
    await queue.goto("/approvals");
    await waitForHydration(queue);
    await queue.locator(".away > summary").click();
    await queue.getByLabel("Who decides for you").fill("alice");
    await queue.getByLabel("How long").selectOption({ label: "3 days" });
    await queue.getByRole("button", { name: "Delegate" }).click();
    await expect(queue.locator(".delegation")).toContainText("alice decides in your place until");
    await queue.locator(".away").screenshot({ path: "screenshots/delegation.png" });

    // Alice's page, read again, knows she decides for bob: her card offers the decision.
    await page.reload();
    await waitForHydration(page);
    const again = cards(page).first();
    await expect(again.locator(".not-approver")).toHaveCount(0);
    await again.getByRole("button", { name: "Approve", exact: true }).click();
    await expect(again).toHaveAttribute("data-status", "succeeded");

    // Ended from the same panel.
    await queue.getByRole("button", { name: "End now" }).click();
    await expect(queue.locator(".delegation")).toHaveCount(0);
  } finally {
    await bob.close();
  }
});

test("a signed decision link opens a confirmation page without logging in, and its button decides", async ({ page, browser, server }) => {
  // The link used a second time.
  allowConsole(/status of 409/);
  await newChat(page);
  await say(page, "refund order 1001");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  const approvalId = await card.evaluate(async (el) => {
    const list = await (await fetch("/api/approvals?status=pending")).json();
    return list[0].id as string;
  });
  const issued = await page.context().request.post(`${server.url}/api/approvals/${approvalId}/links`, { data: {} });
  expect(issued.ok()).toBe(true);
  const { approve_url } = await issued.json();

  // Someone with the link and no session: a page with the call and one button.
  const stranger = await browser.newContext({ baseURL: server.url });
  try {
    const linkPage = await stranger.newPage();
    await linkPage.goto(approve_url);
    await expect(linkPage.getByRole("heading", { name: "Approve this call?" })).toBeVisible();
    await expect(linkPage.locator(".summary")).toContainText("Refund $249.00");
    await expect(card).toHaveAttribute("data-status", "pending_approval");
    await linkPage.screenshot({ path: "screenshots/decision-link.png" });
    await linkPage.getByRole("button", { name: "Approve" }).click();
    await expect(linkPage.getByRole("heading", { name: "Approved" })).toBeVisible();
    await expect(card).toHaveAttribute("data-status", "succeeded");
    // Used again: someone was first.
    await linkPage.goto(approve_url);
    await expect(linkPage.getByRole("heading", { name: "Already decided" })).toBeVisible();
  } finally {
    await stranger.close();
  }
});

testWithAgents(`[defaults]
suggest_grant_after = 1
${REFUNDS_GATE}`)("after approving the same kind of call, the next card offers to allow it here, and then it runs without asking", async ({ page }) => {
  await newChat(page);
  await say(page, "refund order 1001");
  const first = cards(page).first();
  await expect(first.locator(".grant-suggestion")).toHaveCount(0);
  await first.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(first).toHaveAttribute("data-status", "succeeded");

  await say(page, "refund order 1002");
  const second = cards(page).filter({ hasText: "order 1002" }).first();
  await expect(second.locator(".grant-suggestion")).toContainText(
    "You approved process_refund once in this chat with the same kind of arguments: allow it here without asking for 24 hours?",
  );
  await second.getByRole("button", { name: "Approve and always allow" }).click();
  await expect(second).toHaveAttribute("data-status", "succeeded");

  await say(page, "refund order 1006");
  await expect(cards(page).filter({ hasText: "order 1006" }).first()).toHaveAttribute("data-status", "succeeded");
});
