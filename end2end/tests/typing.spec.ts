// Typing as a person does, key by key, in every editor on a card: after each key the field
// keeps the focus, shows what was typed, the page does not scroll, and no card leaves the page.
import { test, expect, newChat, say, cards, waitForHydration, logIn, watchCards, cardsRemoved, typeKeyByKey } from "./fixtures";

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
