import { test, expect, newChat, say, cards } from "./fixtures";

test("after the server restarts, the page reconnects and catches up without a reload", async ({ page, server }) => {
  await newChat(page);
  await say(page, "cancel order 1003");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");

  await server.restart();
  const approvals = await (await page.request.get(`${server.url}/api/approvals`)).json();
  expect(approvals).toHaveLength(1);
  const decided = await page.request.post(`${server.url}/api/approvals/${approvals[0].id}/approve`);
  expect(decided.status()).toBe(200);

  await expect(card).toHaveAttribute("data-status", "succeeded", { timeout: 20_000 });
  await expect(page.locator(".bubble-assistant").last()).toContainText("Canceled order 1003");
  await expect(page.locator(".link-state")).toHaveAttribute("data-state", "live");
});

test("a decision made elsewhere shows up live", async ({ page, server }) => {
  await newChat(page);
  await say(page, "refund order 1002");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  const approvals = await (await page.request.get(`${server.url}/api/approvals`)).json();
  await page.request.post(`${server.url}/api/approvals/${approvals[0].id}/reject`, { data: { reason: "done by phone" } });
  await expect(card).toHaveAttribute("data-status", "rejected");
  await expect(page.locator(".bubble-assistant").last()).toContainText("done by phone");
});

test("the chat is usable at 375 px wide", async ({ page }) => {
  await page.setViewportSize({ width: 375, height: 800 });
  await newChat(page);
  await say(page, "refund order 1001 and 1002");
  await expect(cards(page)).toHaveCount(2);
  await expect(page.getByRole("button", { name: "Approve All" })).toBeVisible();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await page.screenshot({ path: "screenshots/mobile.png", fullPage: true });
});
