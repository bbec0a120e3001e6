import { test, expect, waitForHydration, logIn, chatWaiting } from "./fixtures";

test("the queue at volume: rows grouped by chat that open to the card, several decided together, the count in the tab title", async ({ page, browser, server }) => {
  const alice = page.context().request;
  await chatWaiting(alice, server, "refund order 1001 and 1002", 2);
  await chatWaiting(alice, server, "cancel order 1003", 3);

  const adminContext = await browser.newContext();
  await logIn(adminContext, server, "root");
  const admin = await adminContext.newPage();
  await admin.goto(`${server.url}/approvals`);
  await waitForHydration(admin);
  await expect(admin).toHaveTitle("(3) Approval queue · Countersign");
  const groups = admin.locator(".queue-group");
  await expect(groups).toHaveCount(2);
  await expect(groups.filter({ hasText: "refund order 1001 and 1002" }).locator(".queue-item")).toHaveCount(2);
  await expect(groups.first().locator(".queue-group-title")).toContainText("alice");

  // Compact: a row shows tool, summary, risk and age; the card opens on demand.
  const cancel = admin.locator(".queue-item").filter({ hasText: "Cancel order 1003" });
  await expect(cancel.locator(".queue-row > summary")).toContainText("cancel_order");
  await expect(cancel.getByRole("button", { name: "Approve", exact: true })).toBeHidden();
  await cancel.locator(".queue-row > summary").click();
  await expect(cancel.getByRole("button", { name: "Approve", exact: true })).toBeVisible();
  // Away from the chat, the row says what led to the call.
  await expect(cancel.locator(".queue-context")).toContainText("Asked“cancel order 1003”");

  // An admin in the queue is offered neither a grant in someone else's chat nor a hand-over to themselves.
  await expect(cancel.getByText(/Always allow/)).toHaveCount(0);
  await expect(cancel.getByRole("button", { name: "Hand to admins" })).toHaveCount(0);

  // A new approval arrives live while a reason is being written: the open row stays open and
  // keeps the text.
  await cancel.getByRole("button", { name: "Reject", exact: true }).click();
  const reason = cancel.getByLabel("Reason (optional, the agent sees it)");
  await reason.fill("half-written reason");
  await chatWaiting(alice, server, "refund order 1004", 4);
  await expect(admin.locator(".queue-item")).toHaveCount(4);
  await expect(admin).toHaveTitle("(4) Approval queue · Countersign");
  await expect(reason).toHaveValue("half-written reason");
  await cancel.getByRole("button", { name: "Cancel", exact: true }).click();
  await expect(cancel.getByRole("button", { name: "Approve", exact: true })).toBeVisible();

  // Select the two refunds of the first chat and approve them together.
  const refunds = groups.filter({ hasText: "refund order 1001 and 1002" });
  for (const box of await refunds.locator(".queue-select").all()) await box.check();
  const bar = admin.getByRole("group", { name: "Decide the selected approvals" });
  await expect(bar).toContainText("2 selected");
  await admin.screenshot({ path: "screenshots/queue.png" });
  await bar.getByRole("button", { name: "Approve selected" }).click();
  await expect(admin.locator(".bulk-report")).toHaveText("Approved 2.");
  await expect(admin.locator(".queue-item")).toHaveCount(2);
  await expect(admin).toHaveTitle("(2) Approval queue · Countersign");

  // Select all that is left and reject it with one reason.
  await admin.getByLabel("Select all").check();
  await expect(bar).toContainText("2 selected");
  await bar.getByRole("button", { name: "Reject selected…" }).click();
  await bar.getByRole("textbox").fill("not this week");
  await bar.getByRole("button", { name: "Confirm reject" }).click();
  await expect(admin.locator(".bulk-report")).toHaveText("Rejected 2.");
  await expect(admin.getByText("Nothing here.")).toBeVisible();
  await expect(admin).toHaveTitle("Approval queue · Countersign");

  // Each was its own decision, by root, with the reason where one was given.
  const decided = await (await adminContext.request.get(`${server.url}/api/approvals?status=decided`)).json();
  expect(decided).toHaveLength(4);
  expect(decided.every((a: { decided_by: string }) => a.decided_by === "root")).toBe(true);
  const rejected = decided.filter((a: { state: string }) => a.state === "rejected");
  expect(rejected.map((a: { reason: string }) => a.reason)).toEqual(["not this week", "not this week"]);
  const audit = await (await adminContext.request.get(`${server.url}/api/audit?kind=approval.decided`)).json();
  expect(audit.entries).toHaveLength(4);

  // Only what cannot be undone: a question (which changes nothing) drops out, a refund stays.
  await chatWaiting(alice, server, "refund an order", 1);
  await chatWaiting(alice, server, "refund order 1005", 2);
  await admin.goto(`${server.url}/approvals?reversibility=irreversible`);
  await waitForHydration(admin);
  await expect(admin.getByLabel("Can be undone")).toHaveValue("irreversible");
  await expect(admin.locator(".queue-item")).toHaveCount(1);
  await expect(admin.locator(".queue-item")).toContainText("Refund");
  await admin.goto(`${server.url}/approvals`);
  await expect(admin.locator(".queue-item")).toHaveCount(2);
  await adminContext.close();
});

test("a call that would fail says so on its closed queue row, and approving a selection leaves it to be decided on its own", async ({ page, browser, server }) => {
  const alice = page.context().request;
  await chatWaiting(alice, server, "refund $300 on order 1001", 1);
  await chatWaiting(alice, server, "cancel order 1003", 2);
  const adminContext = await browser.newContext();
  await logIn(adminContext, server, "root");
  const admin = await adminContext.newPage();
  await admin.goto(`${server.url}/approvals`);
  await waitForHydration(admin);
  const refund = admin.locator(".queue-item").filter({ hasText: "Refund $300.00" });
  // Closed, the row already warns; opened, the card shows the same warning as a warning block.
  await expect(refund.locator(".queue-row > summary .will-fail")).toHaveText(
    "Warning: $300.00 is more than the $249.00 left to refund: the call will fail",
  );
  await admin.getByLabel("Select all").check();
  await admin.getByRole("group", { name: "Decide the selected approvals" }).getByRole("button", { name: "Approve selected" }).click();
  await expect(admin.locator(".bulk-report")).toHaveText(
    "Approved 1. Not “Refund $300.00 of $249.00 left on order 1001 · alice · Espresso machine”: $300.00 is more than the $249.00 left to refund: the call will fail; open it to decide it on its own.",
  );
  await expect(admin.locator(".queue-item")).toHaveCount(1);
  await refund.locator(".queue-row > summary").click();
  await expect(refund.locator(".card-warnings")).toContainText("the call will fail");
  // Approved anyway, it fails when it runs: the Decided tab says so, not just "Approved".
  await refund.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(admin.locator(".queue-item")).toHaveCount(0);
  await admin.goto(`${server.url}/approvals?status=decided`);
  const decided = admin.locator("table.decided tbody tr").filter({ hasText: "Refund $300.00" });
  await expect(async () => {
    await admin.reload();
    await expect(decided.locator(".call-failed")).toHaveText("then failed", { timeout: 1_000 });
  }).toPass({ timeout: 10_000 });
  await adminContext.close();
});

test("approving a selection leaves a row with unsent text and never a question; the selection says when only part is ticked", async ({ page, browser, server }) => {
  const alice = page.context().request;
  await chatWaiting(alice, server, "refund order 1004", 1);
  await chatWaiting(alice, server, "cancel order 1003", 2);
  await chatWaiting(alice, server, "refund an order", 3);
  const adminContext = await browser.newContext();
  await logIn(adminContext, server, "root");
  const admin = await adminContext.newPage();
  await admin.goto(`${server.url}/approvals`);
  await waitForHydration(admin);
  // A question is answered on its own: nothing to tick, and Select all leaves it.
  const question = admin.locator(".queue-item").filter({ has: admin.locator(".question-card") });
  await expect(question.locator("input.queue-select")).toHaveCount(0);
  const all = admin.getByLabel("Select all");
  await all.check();
  await expect(admin.locator("input.queue-select:checked")).toHaveCount(2);
  const refund = admin.locator(".queue-item").filter({ hasText: "order 1004" });
  await refund.locator("input.queue-select").uncheck();
  expect(await all.evaluate((box) => (box as HTMLInputElement).indeterminate), "one of two ticked").toBe(true);
  await refund.locator("input.queue-select").check();
  expect(await all.evaluate((box) => (box as HTMLInputElement).indeterminate)).toBe(false);
  // An edit is being written on the refund: the batch leaves it to be sent on its own.
  await refund.locator(".queue-row > summary").click();
  await refund.getByRole("button", { name: "Edit" }).click();
  await refund.getByLabel(/amount/).pressSequentially("5");
  await admin.getByRole("group", { name: "Decide the selected approvals" }).getByRole("button", { name: "Approve selected" }).click();
  await expect(admin.locator(".bulk-report")).toHaveText(
    /^Approved 1\. Not “Refund .* on order 1004 .*”: you have an unsent edit or reason on it; send or discard it first\.$/,
  );
  const states = async () => (await (await alice.get(`${server.url}/api/approvals?status=all`)).json()).map((a: { summary: string; state: string }) => a.state).sort();
  await expect.poll(states).toEqual(["approved", "pending", "pending"]);
  await expect(refund.getByLabel(/amount/)).toHaveValue("5");
  await refund.getByRole("button", { name: "Approve with these changes" }).click();
  await expect.poll(async () => (await (await alice.get(`${server.url}/api/orders/1004`)).json()).refunded).toBe(5);
  // Only the question waits now: nothing to select.
  await expect(admin.locator(".queue-count")).toHaveText("1 pending");
  await expect(admin.getByLabel("Select all")).toHaveCount(0);
  // The filters are the approvals': the Shadow hits tab, which lists every hit, has none.
  await admin.getByRole("link", { name: "Shadow hits" }).click();
  await expect(admin.locator(".filters-fold")).toBeHidden();
  await adminContext.close();
});
