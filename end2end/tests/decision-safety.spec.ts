// What the reviewer sees is what runs: an open edit is never silently discarded, shortcuts fire
// only from the card itself, a card held by the admins offers the user nothing to click, and a
// decision made elsewhere never eats what the reviewer was writing.
import { test, expect, newChat, say, cards, logIn, waitForHydration } from "./fixtures";

test("while an edit is open the only approve action runs the edit; the plain Approve and the a key are gone", async ({ page, server }) => {
  await newChat(page);
  await say(page, "refund order 1004");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await card.getByRole("button", { name: "Edit" }).click();
  await card.getByLabel(/amount/).fill("0.5");

  await expect(card.getByRole("button", { name: "Approve", exact: true })).toHaveCount(0);
  await card.focus();
  await page.keyboard.press("a");
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await page.screenshot({ path: "screenshots/edit-open.png" });

  await card.getByRole("button", { name: "Approve with these changes" }).click();
  await expect(card).toHaveAttribute("data-status", "succeeded");
  const order = await (await page.request.get(`${server.url}/api/orders/1004`)).json();
  expect(order.refunded).toBe(0.5);
});

test("Discard my edit closes the form; Escape closes an open form and gives focus back to the card", async ({ page }) => {
  await newChat(page);
  await say(page, "refund order 1001");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await card.getByRole("button", { name: "Edit" }).click();
  await card.getByRole("button", { name: "Discard my edit" }).click();
  await expect(card.getByLabel("Arguments (JSON)")).toHaveCount(0);
  await expect(card.getByRole("button", { name: "Approve", exact: true })).toBeVisible();

  await card.getByRole("button", { name: "Reject", exact: true }).click();
  const reason = card.getByLabel("Reason (optional, the agent sees it)");
  await expect(reason).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(reason).toHaveCount(0);
  await expect(card).toBeFocused();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
});

test("shortcuts act only when the card itself has focus, and the card shows them", async ({ page }) => {
  await newChat(page);
  await say(page, "cancel order 1003");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");

  for (const name of ["Reject", "Edit"]) {
    await card.getByRole("button", { name, exact: true }).focus();
    await page.keyboard.press("a");
    await expect(card).toHaveAttribute("data-status", "pending_approval");
  }
  await card.getByRole("checkbox").focus();
  await page.keyboard.press("r");
  await expect(card.getByLabel("Reason (optional, the agent sees it)")).toHaveCount(0);

  await card.focus();
  await expect(card.locator(".shortcuts")).toBeVisible();
  // Said to screen readers too, and named on the buttons themselves.
  await expect(card.locator(".shortcuts")).toHaveText("Keys on this card: A approve · R reject");
  await expect(card.locator(".shortcuts")).not.toHaveAttribute("aria-hidden", "true");
  await expect(card.getByRole("button", { name: "Approve", exact: true })).toHaveAttribute("aria-keyshortcuts", "a");
  await expect(card.getByRole("button", { name: "Reject", exact: true })).toHaveAttribute("aria-keyshortcuts", "r");
  await page.keyboard.press("a");
  await expect(card).toHaveAttribute("data-status", "succeeded");
});

test("a card handed to the admins shows the user no decision buttons and says who has it; the admin still decides in the chat", async ({ page, browser, server }) => {
  await newChat(page);
  await say(page, "refund order 1001");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await card.getByRole("button", { name: "Hand to admins" }).click();

  await expect(card.locator(".waiting-for-admin")).toContainText("Waiting for an admin");
  for (const name of ["Approve", "Reject", "Edit", "Defer…"]) {
    await expect(card.getByRole("button", { name, exact: true })).toHaveCount(0);
  }
  await expect(page.locator(".composer-status")).toHaveText("Waiting for an admin to decide 1 tool call");
  // After a reload (server-rendered) it is the same.
  await page.reload();
  await expect(cards(page).first().locator(".waiting-for-admin")).toBeVisible();
  await expect(cards(page).first().getByRole("button", { name: "Approve", exact: true })).toHaveCount(0);
  await page.screenshot({ path: "screenshots/held-for-admins.png" });
  await page.setViewportSize({ width: 390, height: 844 });
  await cards(page).first().scrollIntoViewIfNeeded();
  await page.screenshot({ path: "screenshots/held-for-admins-phone.png" });
  await page.setViewportSize({ width: 1280, height: 720 });

  const adminContext = await browser.newContext();
  await logIn(adminContext, server, "root");
  const admin = await adminContext.newPage();
  await admin.goto(page.url());
  // A click before the page hydrated would land on the server-rendered button and do nothing.
  await waitForHydration(admin);
  const adminCard = admin.locator("article.tool-card").first();
  await adminCard.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(cards(page).first()).toHaveAttribute("data-status", "succeeded");
  await adminContext.close();
});

test("a decision made elsewhere while you write keeps your text and says who decided", async ({ page, browser, server }) => {
  await newChat(page);
  await say(page, "cancel order 1003");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await card.getByRole("button", { name: "Reject", exact: true }).click();
  await card.getByLabel("Reason (optional, the agent sees it)").fill("the customer wants to keep it");

  const adminContext = await browser.newContext();
  await logIn(adminContext, server, "root");
  const approvals = await (await adminContext.request.get(`${server.url}/api/approvals?status=pending`)).json();
  const decided = await adminContext.request.post(`${server.url}/api/approvals/${approvals[0].id}/approve`, { data: {} });
  expect(decided.status()).toBe(200);

  await expect(card).not.toHaveAttribute("data-status", "pending_approval");
  const notice = card.locator(".superseded");
  await expect(notice).toContainText("While you were writing, root approved this call.");
  await expect(notice.locator(".kept-text")).toHaveText("the customer wants to keep it");
  await page.screenshot({ path: "screenshots/decided-elsewhere.png" });
  await page.setViewportSize({ width: 390, height: 844 });
  await notice.scrollIntoViewIfNeeded();
  await page.screenshot({ path: "screenshots/decided-elsewhere-phone.png" });
  await notice.getByRole("button", { name: "Dismiss" }).click();
  await expect(notice).toHaveCount(0);
  await adminContext.close();
});

test("focus stays with the card: Edit focuses its first field, Escape closes it, a confirmed reject moves focus to the next waiting card; two cards in Edit each label their own field", async ({ page }) => {
  await newChat(page);
  await say(page, "refund order 1001 and 1002");
  await expect(page.locator('.tool-card[data-status="pending_approval"]')).toHaveCount(2);
  const [first, second] = [cards(page).nth(0), cards(page).nth(1)];

  await first.getByRole("button", { name: "Edit" }).click();
  await expect(first.getByLabel(/amount/)).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(first.getByRole("button", { name: "Approve with these changes" })).toHaveCount(0);
  await expect(first).toBeFocused();

  // Two open edits: no id twice on the page, and each label names (and focuses) its own field.
  await first.getByRole("button", { name: "Edit" }).click();
  await second.getByRole("button", { name: "Edit" }).click();
  await expect(second.getByLabel(/amount/)).toBeFocused();
  const ids = await page.locator("[id]").evaluateAll((els) => els.map((e) => e.id));
  expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  await first.locator("label", { hasText: "amount" }).click();
  await expect(first.getByLabel(/amount/)).toBeFocused();
  await second.locator("label", { hasText: "amount" }).click();
  await expect(second.getByLabel(/amount/)).toBeFocused();
  await first.getByRole("button", { name: "Discard my edit" }).click();
  await second.getByRole("button", { name: "Discard my edit" }).click();

  await first.getByRole("button", { name: "Reject", exact: true }).click();
  await first.getByLabel("Reason (optional, the agent sees it)").fill("wrong order");
  await first.getByRole("button", { name: "Confirm reject" }).click();
  await expect(cards(page).nth(0)).toHaveAttribute("data-status", "rejected");
  // The other call still waits: it takes focus (with none waiting, the decided card keeps it:
  // after-deciding.spec.ts).
  await expect(cards(page).nth(1)).toBeFocused();
});

test("your own reject with a reason or approve with an edit is never reported as decided elsewhere", async ({ page }) => {
  await newChat(page);
  await say(page, "cancel order 1003");
  const cancel = cards(page).first();
  await expect(cancel).toHaveAttribute("data-status", "pending_approval");
  await cancel.getByRole("button", { name: "Reject", exact: true }).click();
  await cancel.getByLabel("Reason (optional, the agent sees it)").fill("the customer wants to keep it");
  await cancel.getByRole("button", { name: "Confirm reject" }).click();
  await expect(cancel).toHaveAttribute("data-status", "rejected");
  await expect(cancel.locator(".decision")).toContainText("the customer wants to keep it");
  await expect(cancel.locator(".superseded")).toHaveCount(0);

  await say(page, "refund order 1004");
  const refund = cards(page).nth(1);
  await expect(refund).toHaveAttribute("data-status", "pending_approval");
  await refund.getByRole("button", { name: "Edit" }).click();
  await refund.getByLabel(/amount/).fill("0.5");
  await refund.getByRole("button", { name: "Approve with these changes" }).click();
  await expect(refund).toHaveAttribute("data-status", "succeeded");
  await expect(refund.locator(".superseded")).toHaveCount(0);
  // Nothing stays open behind the decided card either: a reload shows the same.
  await page.reload();
  await expect(cards(page).nth(1)).toHaveAttribute("data-status", "succeeded");
  await expect(page.locator(".superseded")).toHaveCount(0);
});

test("the card names the amount, the customer and the item, and flags a refund above what is left", async ({ page }) => {
  await newChat(page);
  await say(page, "refund $300 on order 1001");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await expect(card.locator(".summary")).toHaveText("Refund $300.00 of $249.00 left on order 1001 · alice · Espresso machine");
  await expect(card.locator(".card-warnings")).toHaveText("$300.00 is more than the $249.00 left to refund: the call will fail");
  await page.screenshot({ path: "screenshots/card-warning.png" });
  await page.setViewportSize({ width: 390, height: 844 });
  await card.scrollIntoViewIfNeeded();
  await page.screenshot({ path: "screenshots/card-warning-phone.png" });
});

test("status badges are plain words", async ({ page }) => {
  await newChat(page);
  await say(page, "refund order 1001");
  const card = cards(page).first();
  await expect(card.locator(".badge.status")).toHaveText("Pending approval");
  await card.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(card.locator(".badge.status")).toHaveText("Done");
});
