import { test, expect, newChat, say, cards } from "./fixtures";

test("each page has one h1 and each card is led by a heading", async ({ page }) => {
  await page.goto("/");
  await expect(page.locator("h1")).toHaveCount(1);
  await newChat(page);
  await say(page, "cancel order 1003 and 1005");
  await expect(cards(page)).toHaveCount(2);
  await expect(page.locator("h1")).toHaveCount(1);
  for (const card of await cards(page).all()) {
    await expect(card.getByRole("heading", { level: 2 })).toHaveText(/^Cancel order 100[35] · /);
  }
  await page.goto("/approvals");
  await expect(page.locator("h1")).toHaveCount(1);
  await expect(page.locator("article.tool-card h2")).toHaveCount(2);
});
