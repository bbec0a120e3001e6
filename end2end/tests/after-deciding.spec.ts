// After deciding, a keyboard user goes on from where they were: focus moves to the next call
// that waits for them, or stays on the card they decided (never back to the top of the page).
// A page that missed a live update (its stream was down while someone else decided) shows the
// decision and who made it when the reviewer acts on the stale card, not the server's refusal.
import { test, expect, newChat, say, cards, logIn, waitForHydration, allowConsole } from "./fixtures";
import type { Locator, Page } from "@playwright/test";

/** What has keyboard focus: `card <call id>`, `#<id>`, a control by its text, or `body`. */
async function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return "body";
    if (el.matches(".tool-card")) return `card ${el.getAttribute("data-call-id")}`;
    if (el.id) return `#${el.id}`;
    return `${el.tagName.toLowerCase()} "${(el.textContent ?? "").trim()}"`;
  });
}

/** Presses Tab, as a keyboard user does, until `target` has focus. */
async function tabTo(page: Page, target: Locator, most = 15): Promise<void> {
  for (let i = 0; i < most && !(await target.evaluate((el) => el === document.activeElement)); i++) {
    await page.keyboard.press("Tab");
  }
  await expect(target).toBeFocused();
}

/** The next Tab goes on from the card `callId` (into it or past it), inside the chat: not back to the top of the page. */
async function nextTabGoesOnFrom(page: Page, callId: string): Promise<void> {
  await page.keyboard.press("Tab");
  expect(await focused(page)).not.toBe('a "Skip to content"');
  const where = await page.evaluate((id) => {
    const el = document.activeElement;
    const card = document.querySelector(`.tool-card[data-call-id="${id}"]`);
    if (!el || !card) return { inChat: false, fromCard: false };
    return {
      inChat: !!el.closest("section.chat"),
      fromCard: card.contains(el) || !!(card.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING),
    };
  }, callId);
  expect(where).toEqual({ inChat: true, fromCard: true });
}

test("deciding with the keyboard moves focus to the next call that waits, and leaves it on the decided card when none does", async ({ page }) => {
  await newChat(page);
  await say(page, "refund order 1001 and 1002");
  await expect(page.locator('.tool-card[data-status="pending_approval"]')).toHaveCount(2);
  const [first, second] = [cards(page).nth(0), cards(page).nth(1)];
  const firstId = (await first.getAttribute("data-call-id"))!;
  const secondId = (await second.getAttribute("data-call-id"))!;
  // The arriving calls took focus: the first of them.
  await expect.poll(() => focused(page)).toBe(`card ${firstId}`);

  // `a` approves the focused card; the next call that waits takes focus.
  await page.keyboard.press("a");
  await expect(first).not.toHaveAttribute("data-status", "pending_approval");
  await expect.poll(() => focused(page)).toBe(`card ${secondId}`);
  // The approved card is drawn again as it runs; focus stays on the waiting one.
  await expect(first).toHaveAttribute("data-status", "succeeded");
  expect(await focused(page)).toBe(`card ${secondId}`);

  // The second card's Approve button, reached with Tab and pressed with Enter.
  const approve = second.getByRole("button", { name: "Approve", exact: true });
  await tabTo(page, approve);
  expect(await focused(page)).toBe('button "Approve"');
  await page.keyboard.press("Enter");
  await expect(second).not.toHaveAttribute("data-status", "pending_approval");
  // Nothing else waits: the decided card keeps focus, also while it runs and when it is done.
  await expect.poll(() => focused(page)).toBe(`card ${secondId}`);
  await expect(second).toHaveAttribute("data-status", "succeeded");
  expect(await focused(page)).toBe(`card ${secondId}`);

  await nextTabGoesOnFrom(page, secondId);
});

test("approving a call someone else rejected while the page's live stream was down shows the rejection and who made it", async ({ page, browser, server }) => {
  // The stale page's approval is refused by the server (409).
  allowConsole(/status of 409/);
  // The live stream this test cuts, failing each time the page tries it again.
  allowConsole(/\/api\/conversations\/[^/ ]+\/events/);
  await newChat(page);
  await say(page, "refund order 1001");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  const callId = (await card.getAttribute("data-call-id"))!;
  const conversationId = new URL(page.url()).pathname.split("/").pop()!;
  const [approval] = await (await page.request.get(`${server.url}/api/approvals?status=pending`)).json();

  // The page loses its live stream (and cannot get it back): it misses what happens next.
  await page.route(/\/api\/conversations\/[^/?]+\/events/, (route) => route.abort("connectionrefused"));
  await page.reload();
  await waitForHydration(page);
  await expect(page.locator(".link-state")).toHaveAttribute("data-state", "reconnecting");

  // Meanwhile root rejects the call, and the agent answers the rejection.
  const rootContext = await browser.newContext();
  await logIn(rootContext, server, "root");
  const rejected = await rootContext.request.post(`${server.url}/api/approvals/${approval.id}/reject`, { data: { reason: "refunded by phone" } });
  expect(rejected.status()).toBe(200);
  await rootContext.close();
  await expect
    .poll(async () => (await (await page.request.get(`${server.url}/api/conversations/${conversationId}`)).json()).view.items.at(-1)?.kind)
    .toBe("assistant");
  // The stale page still offers the decision.
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  const approve = card.getByRole("button", { name: "Approve", exact: true });
  await expect(approve).toBeEnabled();

  // With the keyboard: the skip link, the chat, its card, the card's Approve button.
  await page.keyboard.press("Tab");
  expect(await focused(page)).toBe('a "Skip to content"');
  await page.keyboard.press("Enter");
  await expect.poll(() => focused(page)).toBe("#content");
  await page.keyboard.press("Tab");
  expect(await focused(page)).toBe(`card ${callId}`);
  await tabTo(page, approve);
  expect(await focused(page)).toBe('button "Approve"');
  await page.keyboard.press("Enter");

  // The card shows the decision made first, and a polite line says who made it; no error, no id.
  await expect(card).toHaveAttribute("data-status", "rejected");
  await expect(card.locator(".decision")).toHaveText("Rejected by root: refunded by phone");
  const said = card.locator(".decided-first");
  await expect(said).toHaveText("root had already rejected this call, so your decision was not applied.");
  await expect(said).toHaveAttribute("role", "status");
  await expect(page.locator(".tool-card [role=alert], .tool-card .error")).toHaveCount(0);
  for (const name of ["Approve", "Reject", "Edit", "Defer…"]) {
    await expect(card.getByRole("button", { name, exact: true })).toHaveCount(0);
  }
  expect(await page.locator("body").innerText()).not.toContain(approval.id);
  // What the stream missed after it is there too: the agent's answer to the rejection.
  await expect(page.locator(".bubble-assistant").last()).toContainText("refunded by phone");

  // Nothing else waits: the decided card has focus, and the next Tab goes on from it.
  await expect.poll(() => focused(page)).toBe(`card ${callId}`);
  await nextTabGoesOnFrom(page, callId);
});
