import { test, expect, waitForHydration, allowConsole } from "./fixtures";

test("the home page hydrates and New chat opens an empty chat", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("heading", { name: "Countersign" })).toBeVisible();
  await waitForHydration(page);
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveURL(/\/c\/[0-9a-f-]+$/);
  await expect(page.getByText("Ask the agent something")).toBeVisible();
  await expect(page.locator("#composer-input")).toBeEnabled();
  await expect(page.getByRole("navigation", { name: "Chats" }).getByRole("link", { name: "New chat" })).toBeVisible();
  await page.screenshot({ path: "screenshots/home.png", fullPage: true });
});

test("an unknown chat says so with a 404", async ({ page }) => {
  // The unknown chat itself.
  allowConsole(/status of 404/);
  const response = await page.goto("/c/does-not-exist");
  expect(response?.status()).toBe(404);
  await expect(page.getByRole("alert")).toHaveText("This conversation does not exist.");
});
