import { test, expect, newChat } from "./fixtures";

test("the composer will not send only spaces, and says so when a message is over the limit instead of cutting it", async ({ page }) => {
  await newChat(page);
  const input = page.locator("#composer-input");
  const send = page.getByRole("button", { name: "Send" });
  await input.fill("   ");
  await expect(send).toBeDisabled();
  await input.fill("x".repeat(8001));
  await expect(input).toHaveValue("x".repeat(8001));
  await expect(page.locator(".composer-problem")).toHaveText("The message is 8001 characters long; the limit is 8000. Shorten it to send it.");
  await expect(send).toBeDisabled();
  await input.fill("x".repeat(8000));
  await expect(page.locator(".composer-problem")).toHaveCount(0);
  await expect(send).toBeEnabled();
});
