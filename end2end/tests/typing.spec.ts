// Typing as a person does, key by key, in every editor on a card: after each key the field
// keeps the focus, shows what was typed, the page does not scroll, and no card leaves the page.
import { test, expect, newChat, say, cards, waitForHydration, logIn, watchCards, cardsRemoved, typeKeyByKey, chatWaiting } from "./fixtures";

test("typing in the card's editors: each key stays in the field, which stays in place on a long chat, and no card is drawn again", async ({ page, server }) => {
  test.setTimeout(90_000);
  await newChat(page);
  // A chat long enough to scroll.
  for (const order of [1001, 1002, 1003]) {
    await say(page, `look up order ${order}`);
    await expect(cards(page)).toHaveCount(order - 1000);
    await expect(cards(page).last()).toHaveAttribute("data-status", "succeeded");
  }
  await say(page, "refund order 1004");
  const card = cards(page).last();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await page.evaluate(() => window.scrollTo(0, document.body.scrollHeight));
  expect(await page.evaluate(() => window.scrollY), "the chat is long enough to scroll").toBeGreaterThan(0);
  await watchCards(page);

  // The form: the amount, key by key.
  await card.getByRole("button", { name: "Edit" }).click();
  const amount = card.getByLabel(/amount/);
  await amount.focus();
  await typeKeyByKey(page, amount, "", "75");
  await expect(card.locator(".edit-preview .preview-summary")).toContainText("Refund $75.00");

  // JSON: everything selected and typed again.
  await card.getByRole("button", { name: "Edit as JSON" }).click();
  const json = card.getByLabel("Arguments (JSON)");
  await json.focus();
  await page.keyboard.press("ControlOrMeta+A");
  await typeKeyByKey(page, json, "", '{"order_id":1004,"amount":7}');
  expect(await cardsRemoved(page), "no card left the page while typing").toBe(0);
  await card.getByRole("button", { name: "Approve with these changes" }).click();
  await expect(card).toHaveAttribute("data-status", "succeeded");
  const order = await (await page.request.get(`${server.url}/api/orders/1004`)).json();
  expect(order.refunded).toBe(7);

  // A reject reason.
  await say(page, "refund order 1002");
  const next = cards(page).last();
  await expect(next).toHaveAttribute("data-status", "pending_approval");
  await next.getByRole("button", { name: "Reject", exact: true }).click();
  const reason = next.getByLabel(/^Reason/);
  await reason.focus();
  await typeKeyByKey(page, reason, "", "not now");
  await next.getByRole("button", { name: "Confirm reject" }).click();
  await expect(next).toHaveAttribute("data-status", "rejected");
  await expect(page.locator(".bubble-assistant").last()).toContainText("not now");
});

test("typing in the queue's editor keeps each key", async ({ page, browser, server }) => {
  await newChat(page);
  await say(page, "refund order 1004");
  await expect(cards(page).first()).toHaveAttribute("data-status", "pending_approval");

  const adminContext = await browser.newContext();
  await logIn(adminContext, server, "root");
  const admin = await adminContext.newPage();
  await admin.goto(`${server.url}/approvals`);
  await waitForHydration(admin);
  const row = admin.locator(".queue-item").first();
  await row.locator(".queue-row > summary").click();
  await watchCards(admin);
  await row.getByRole("button", { name: "Edit" }).click();
  const amount = row.getByLabel(/amount/);
  await amount.focus();
  await typeKeyByKey(admin, amount, "", "12");
  expect(await cardsRemoved(admin)).toBe(0);
  await row.getByRole("button", { name: "Approve with these changes" }).click();
  await expect.poll(async () => (await (await page.request.get(`${server.url}/api/orders/1004`)).json()).refunded).toBe(12);
  await adminContext.close();
});

test("typing in the queue while new approvals arrive: each editor keeps its text, its mode and the focus", async ({ page, browser, server }) => {
  test.setTimeout(120_000);
  const alice = page.context().request;
  const arrive = (text: string, total: number) => chatWaiting(alice, server, text, total);
  await arrive("refund order 1004", 1);
  await arrive("refund an order", 2);

  const adminContext = await browser.newContext();
  await logIn(adminContext, server, "root");
  const admin = await adminContext.newPage();
  await admin.goto(`${server.url}/approvals`);
  await waitForHydration(admin);
  const pending = admin.locator(".queue-count");
  await expect(pending).toHaveText("2 pending");
  await watchCards(admin);
  const row = (text: string) => admin.locator(".queue-item").filter({ hasText: text });

  // Half an edit as JSON, then a call arrives: the text, the mode and the focus stay.
  const refund = row("order 1004");
  await refund.locator(".queue-row > summary").click();
  await refund.getByRole("button", { name: "Edit" }).click();
  await refund.getByRole("button", { name: "Edit as JSON" }).click();
  const json = refund.getByLabel("Arguments (JSON)");
  await json.focus();
  await admin.keyboard.press("ControlOrMeta+A");
  await typeKeyByKey(admin, json, "", '{"order_id":1004,');
  await arrive("cancel order 1003", 3);
  await expect(pending).toHaveText("3 pending");
  await typeKeyByKey(admin, json, '{"order_id":1004,', '"amount":7}');
  await expect(refund.getByRole("button", { name: "Edit as a form" })).toBeVisible();

  // Half an answer to the agent's question, then a call arrives.
  const question = admin.locator(".queue-item").filter({ has: admin.locator(".question-card") });
  await question.locator(".queue-row > summary").click();
  const answer = question.getByLabel("Your answer");
  await answer.focus();
  await typeKeyByKey(admin, answer, "", "10");
  await arrive("refund order 1001", 4);
  await expect(pending).toHaveText("4 pending");
  await typeKeyByKey(admin, answer, "10", "02");

  // Half an amount in the tool's form, then a call arrives.
  const other = row("order 1001");
  await other.locator(".queue-row > summary").click();
  await other.getByRole("button", { name: "Edit" }).click();
  const amount = other.getByLabel(/amount/);
  await amount.focus();
  await typeKeyByKey(admin, amount, "", "1");
  await arrive("cancel order 1002", 5);
  await expect(pending).toHaveText("5 pending");
  await typeKeyByKey(admin, amount, "1", "5");
  expect(await cardsRemoved(admin), "no row was drawn again while typing").toBe(0);

  // Each is sent as typed.
  await refund.getByRole("button", { name: "Approve with these changes" }).click();
  await expect.poll(async () => (await (await alice.get(`${server.url}/api/orders/1004`)).json()).refunded).toBe(7);
  await question.getByRole("button", { name: "Send answer" }).click();
  await expect(question).toHaveCount(0);
  await other.getByRole("button", { name: "Approve with these changes" }).click();
  await expect.poll(async () => (await (await alice.get(`${server.url}/api/orders/1001`)).json()).refunded).toBe(15);
  await adminContext.close();
});

test("a queue row drawn again while its reason is typed (the call was handed over) keeps the focus and the caret", async ({ page, browser, server }) => {
  const alice = page.context().request;
  await chatWaiting(alice, server, "cancel order 1003", 1);
  const adminContext = await browser.newContext();
  await logIn(adminContext, server, "root");
  const admin = await adminContext.newPage();
  await admin.goto(`${server.url}/approvals`);
  await waitForHydration(admin);
  const row = admin.locator(".queue-item").first();
  await row.locator(".queue-row > summary").click();
  await row.getByRole("button", { name: "Reject", exact: true }).click();
  const reason = row.getByLabel(/^Reason/);
  await expect(reason).toBeFocused();
  await typeKeyByKey(admin, reason, "", "kept");
  await admin.keyboard.press("Home");
  // Alice hands the call to the admins: the row changes (it says so) and is drawn again.
  const [pending] = await (await alice.get(`${server.url}/api/approvals`)).json();
  expect((await alice.post(`${server.url}/api/approvals/${pending.id}/escalate`, { data: {} })).status()).toBe(200);
  await expect(row.locator(".badge.held")).toContainText("with the admins");
  await expect(reason).toBeFocused();
  await admin.keyboard.type("still ");
  await expect(reason).toHaveValue("still kept");
  await adminContext.close();
});
