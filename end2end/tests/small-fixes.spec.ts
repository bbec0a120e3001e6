// What people ran into, each done the way they did it: a reason being written in the queue when
// someone else decides, a decision after the session ended on a phone, the signed link's times,
// the Decided tab's order and its fit on a phone, how the agent words a rejection's reason, the
// reject form under the composer, and Escape on the chat drawer.
import { test, expect, waitForHydration, logIn, newChat, say, cards, allowConsole, PASSWORD, chatWaiting } from "./fixtures";

const PHONE = { width: 390, height: 844 };

test("a reason being written in the queue stays with its row, saying who decided, until it is dismissed", async ({ page, browser, server }) => {
  const alice = page.context().request;
  await chatWaiting(alice, server, "cancel order 1003", 1);
  const adminContext = await browser.newContext();
  await logIn(adminContext, server, "root");
  const admin = await adminContext.newPage();
  await admin.goto(`${server.url}/approvals`);
  await waitForHydration(admin);
  const row = admin.locator(".queue-item").filter({ hasText: "Cancel order 1003" });
  await row.locator(".queue-row > summary").click();
  await row.getByRole("button", { name: "Reject", exact: true }).click();
  const reason = row.getByLabel("Reason (optional, the agent sees it)");
  await expect(reason).toBeFocused();
  await reason.pressSequentially("the customer wants to keep it");

  // Meanwhile alice decides it herself.
  const [pending] = await (await alice.get(`${server.url}/api/approvals`)).json();
  expect((await alice.post(`${server.url}/api/approvals/${pending.id}/approve`, { data: {} })).status()).toBe(200);

  const kept = admin.locator(".queue-kept");
  await expect(kept).toContainText("Cancel order 1003");
  await expect(kept.locator(".superseded")).toContainText("While you were writing, alice approved this call.");
  await expect(kept.locator(".kept-text")).toHaveText("the customer wants to keep it");
  await expect(admin.getByText("Nothing here.")).toHaveCount(0);
  // Another live change of the queue does not take it away.
  await chatWaiting(alice, server, "refund order 1001", 1);
  await expect(admin.locator(".queue-item").filter({ hasText: "Refund" })).toHaveCount(1);
  await expect(kept.locator(".kept-text")).toHaveText("the customer wants to keep it");

  await kept.getByRole("button", { name: "Dismiss" }).focus();
  await admin.keyboard.press("Enter");
  await expect(kept).toHaveCount(0);
  await expect(admin.locator("#content")).toBeFocused();
  await expect(admin.locator(".queue-item")).toHaveCount(1);
  await adminContext.close();
});

test("on a phone, a decision refused because the session ended says so on the card, with a login that comes back", async ({ page, server }) => {
  // The refused request itself is what the browser reports.
  allowConsole(/status of 401/);
  await page.setViewportSize(PHONE);
  await newChat(page);
  const chat = new URL(page.url()).pathname;
  await say(page, "refund order 1001");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");

  // Logged out elsewhere (the same cookie): the next decision is refused.
  expect((await page.context().request.delete(`${server.url}/api/session`)).status()).toBe(204);
  const approve = card.getByRole("button", { name: "Approve", exact: true });
  await approve.scrollIntoViewIfNeeded();
  await approve.focus();
  await page.keyboard.press("Enter");
  const note = card.locator(".error");
  await expect(note).toHaveText("Your session has ended: log in again");
  await expect(note).not.toContainText("API token");
  const login = note.getByRole("link", { name: "log in again" });
  await expect(login).toBeInViewport();
  await expect(card).toHaveAttribute("data-status", "pending_approval");

  await login.focus();
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/login\?next=/);
  await waitForHydration(page);
  await page.getByLabel("User name").pressSequentially("alice");
  await page.getByLabel("Password").pressSequentially(PASSWORD);
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(new RegExp(`${chat}$`));
  await waitForHydration(page);
  const again = cards(page).first();
  await again.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(again).toHaveAttribute("data-status", "succeeded");
});

test("a signed link used again says when the call was decided the way it says its deadline", async ({ page, browser, server }) => {
  // The link used a second time.
  allowConsole(/status of 409/);
  const alice = page.context().request;
  await chatWaiting(alice, server, "refund order 1001", 1);
  const [approval] = await (await alice.get(`${server.url}/api/approvals`)).json();
  const issued = await alice.post(`${server.url}/api/approvals/${approval.id}/links`, { data: {} });
  expect(issued.ok()).toBe(true);
  const { approve_url } = await issued.json();

  const stranger = await browser.newContext({ baseURL: server.url });
  try {
    const linkPage = await stranger.newPage();
    await linkPage.goto(approve_url);
    await expect(linkPage.locator(".countdown")).toHaveText(/^Decide before \d{4}-\d\d-\d\d \d\d:\d\d UTC\.$/);
    await linkPage.getByRole("button", { name: "Approve" }).focus();
    await linkPage.keyboard.press("Enter");
    await expect(linkPage.getByRole("heading", { name: "Approved" })).toBeVisible();
    await linkPage.goto(approve_url);
    await expect(linkPage.getByRole("heading", { name: "Already decided" })).toBeVisible();
    await expect(linkPage.locator(".reason")).toHaveText(
      /^This call was already approved by alice \(\d{4}-\d\d-\d\d \d\d:\d\d UTC\)\. Nothing was changed\.$/,
    );
  } finally {
    await stranger.close();
  }
});

test("the Decided tab lists the latest decision first, whenever the call was asked", async ({ page, browser, server }) => {
  const alice = page.context().request;
  await chatWaiting(alice, server, "refund order 1001", 1);
  await chatWaiting(alice, server, "cancel order 1003", 2);
  const adminContext = await browser.newContext();
  await logIn(adminContext, server, "root");
  const admin = await adminContext.newPage();
  await admin.goto(`${server.url}/approvals`);
  await waitForHydration(admin);

  // The later request is decided first, the earlier one after it.
  const cancel = admin.locator(".queue-item").filter({ hasText: "Cancel order 1003" });
  await cancel.locator(".queue-row > summary").click();
  await cancel.getByRole("button", { name: "Reject", exact: true }).click();
  await cancel.getByLabel("Reason (optional, the agent sees it)").pressSequentially("not now");
  await admin.keyboard.press("Enter");
  await expect(admin.locator(".queue-item")).toHaveCount(1);
  const refund = admin.locator(".queue-item").filter({ hasText: "Refund" });
  await refund.locator(".queue-row > summary").click();
  await refund.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(admin.getByText("Nothing here.")).toBeVisible();

  await admin.getByRole("navigation", { name: "Queue" }).getByRole("link", { name: "Decided" }).click();
  const rows = admin.locator("table.decided tbody tr");
  await expect(rows).toHaveCount(2);
  await expect(rows.nth(0)).toContainText("Refund");
  await expect(rows.nth(1)).toContainText("Cancel order 1003");
  await adminContext.close();
});

test("the agent words a rejection's reason without a second period, and a reject without a reason without one", async ({ page }) => {
  await newChat(page);
  await say(page, "cancel order 1003");
  const first = cards(page).first();
  await expect(first).toHaveAttribute("data-status", "pending_approval");
  await first.focus();
  await page.keyboard.press("r");
  const reason = first.getByLabel("Reason (optional, the agent sees it)");
  await expect(reason).toBeFocused();
  await reason.pressSequentially("testing reject all.");
  await page.keyboard.press("Enter");
  await expect(first).toHaveAttribute("data-status", "rejected");
  const answer = page.locator(".bubble-assistant").last();
  await expect(answer).toContainText("The reviewer rejected cancel_order (reason: testing reject all).");
  await expect(answer).not.toContainText(".).");

  await expect(page.locator("#composer-input")).toBeEnabled();
  await say(page, "cancel order 1005");
  const second = cards(page).nth(1);
  await expect(second).toHaveAttribute("data-status", "pending_approval");
  await second.focus();
  await page.keyboard.press("r");
  await expect(second.getByLabel("Reason (optional, the agent sees it)")).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(second).toHaveAttribute("data-status", "rejected");
  const last = page.locator(".bubble-assistant").last();
  await expect(last).toContainText("The reviewer rejected cancel_order.");
  await expect(last).not.toContainText("reason:");
  await expect(last).not.toContainText("rejected by a reviewer");
});

test("on a phone, the reject form opens whole above the composer", async ({ page }) => {
  await page.setViewportSize(PHONE);
  await newChat(page);
  await say(page, "refund order 1001");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  const footer = page.locator(".chat-footer");
  const reject = card.getByRole("button", { name: "Reject", exact: true });
  // Scrolled the way a person does, until the card's buttons just show above the composer.
  await reject.evaluate((button) => {
    const top = document.querySelector(".chat-footer")!.getBoundingClientRect().top;
    window.scrollBy(0, button.getBoundingClientRect().bottom - top + 8);
  });
  await expect(reject).toBeInViewport();
  await reject.click();
  const reason = card.getByLabel("Reason (optional, the agent sees it)");
  await expect(reason).toBeFocused();
  const confirm = card.getByRole("button", { name: "Confirm reject" });
  // The whole form is above the composer, its buttons too.
  await expect(async () => {
    const button = (await confirm.boundingBox())!;
    const composer = (await footer.boundingBox())!;
    expect(button.y).toBeGreaterThanOrEqual(0);
    expect(button.y + button.height).toBeLessThanOrEqual(composer.y);
  }).toPass({ timeout: 5_000 });
  await reason.pressSequentially("duplicate refund");
  await page.keyboard.press("Tab");
  await expect(confirm).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(card).toHaveAttribute("data-status", "rejected");
});

test("on a phone, Escape closes the chat drawer and gives focus back to its button", async ({ page }) => {
  await page.setViewportSize(PHONE);
  await newChat(page);
  const toggle = page.locator(".drawer-toggle");
  await expect(toggle).toHaveAttribute("aria-expanded", "false");
  await toggle.focus();
  await page.keyboard.press("Enter");
  await expect(toggle).toHaveAttribute("aria-expanded", "true");
  const newChatButton = page.getByRole("button", { name: "New chat" });
  await expect(newChatButton).toBeVisible();
  await page.keyboard.press("Tab");
  await expect(newChatButton).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(toggle).toHaveAttribute("aria-expanded", "false");
  await expect(newChatButton).toBeHidden();
  await expect(toggle).toBeFocused();
});

test("on a phone, the Decided tab fits the screen: nothing to scroll sideways, the outcome in view", async ({ page, server }) => {
  const alice = page.context().request;
  await chatWaiting(alice, server, "refund order 1001", 1);
  const [approval] = await (await alice.get(`${server.url}/api/approvals`)).json();
  const rejected = await alice.post(`${server.url}/api/approvals/${approval.id}/reject`, { data: { reason: "not this week" } });
  expect(rejected.status()).toBe(200);

  await page.setViewportSize(PHONE);
  await page.goto("/approvals?status=decided");
  await waitForHydration(page);
  const row = page.locator("table.decided tbody tr").first();
  const outcome = row.locator("[data-state]");
  await expect(outcome).toContainText("Rejected");
  const box = (await outcome.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(PHONE.width);
  const overflow = await page.locator(".table-wrap").evaluate((el) => el.scrollWidth - el.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  // Each value is named, as the column headings name them on a wide screen.
  await expect(row.locator('td[data-label="Outcome"]')).toBeVisible();
  await expect(row).toContainText("not this week");
});
