import { testWithAgents, expect, newChat, say, cards, waitForHydration } from "./fixtures";

// A chat page shows its last 4 items (and every waiting card); the rest come on request.
const test = testWithAgents(undefined, { COUNTERSIGN_PAGE_ITEMS: "4" });

test("a long chat opens at its last items with the waiting card, and shows earlier ones on request", async ({ page }) => {
  await newChat(page);
  for (const order of [1001, 1002, 1003]) {
    await say(page, `look up order ${order}`);
    await expect(page.locator(".bubble-assistant").last()).toContainText(String(order));
    await expect(page.locator("#composer-input")).toBeEnabled();
  }
  await say(page, "refund order 1004");
  await expect(cards(page).last()).toHaveAttribute("data-status", "pending_approval");

  await page.reload();
  await waitForHydration(page);
  const users = page.locator(".bubble-user");
  await expect(users).toHaveCount(1);
  await expect(users.first()).toHaveText("refund order 1004");
  await expect(cards(page).last()).toHaveAttribute("data-status", "pending_approval");
  await page.screenshot({ path: "screenshots/show-earlier.png" });

  const earlier = page.getByRole("button", { name: "Show earlier messages" });
  // What the reader was looking at stays where it was on screen when earlier items arrive above.
  const reading = users.filter({ hasText: "refund order 1004" });
  const y = (await reading.boundingBox())!.y;
  await earlier.click();
  await expect(users).toHaveCount(2);
  // (Within a line: the earlier items above are hundreds of pixels high.)
  await expect(async () => expect(Math.abs((await reading.boundingBox())!.y - y)).toBeLessThan(24)).toPass({ timeout: 3_000 });
  // Four items a click (a look-up turn is three or four): a few more clicks reach the start.
  for (let i = 0; i < 4 && (await earlier.count()) > 0; i++) {
    await earlier.click();
    await expect(page.locator('.show-earlier [aria-busy="true"]')).toHaveCount(0);
  }
  await expect(earlier).toHaveCount(0);
  await expect(users).toHaveCount(4);
  await expect(users.first()).toHaveText("look up order 1001");

  // The page stays live: the waiting card is decided here and the turn finishes.
  await page.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(cards(page).last()).toHaveAttribute("data-status", "succeeded");
  await expect(users).toHaveCount(4);
});
