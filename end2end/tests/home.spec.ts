import { test, expect, waitForHydration } from "./fixtures";

test("the home page hydrates and its button responds", async ({ page }) => {
  const errors: string[] = [];
  page.on("pageerror", (err) => errors.push(err.message));
  page.on("console", (msg) => msg.type() === "error" && errors.push(msg.text()));

  await page.goto("/");
  await expect(page.getByRole("heading", { name: "Countersign" })).toBeVisible();
  await waitForHydration(page);

  const count = page.locator("#approval-count");
  await expect(count).toHaveText("0");
  await page.getByRole("button", { name: "Countersign" }).click();
  await page.getByRole("button", { name: "Countersign" }).click();
  await expect(count).toHaveText("2");

  await page.screenshot({ path: "screenshots/home.png", fullPage: true });
  expect(errors).toEqual([]);
});
