import { test, expect, newChat, say, cards } from "./fixtures";

/** Relative brightness 0–255 of a computed CSS colour such as "rgb(18, 22, 28)". */
function brightness(color: string): number {
  const [r, g, b] = color.match(/\d+(\.\d+)?/g)!.map(Number);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

test("a dark screen gets the dark theme: dark page and cards, light text, readable buttons", async ({ page }) => {
  await page.emulateMedia({ colorScheme: "dark" });
  await newChat(page);
  await say(page, "refund order 1001");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  const colours = await page.evaluate(() => {
    const style = (selector: string) => getComputedStyle(document.querySelector(selector)!);
    return {
      page: style("html").backgroundColor,
      text: style("html").color,
      card: style(".tool-card").backgroundColor,
      cardText: style(".tool-card").color,
      approve: style(".btn-approve").backgroundColor,
      approveText: style(".btn-approve").color,
      field: style("#composer-input").backgroundColor,
    };
  });
  expect(brightness(colours.page)).toBeLessThan(60);
  expect(brightness(colours.card)).toBeLessThan(60);
  expect(brightness(colours.field)).toBeLessThan(60);
  expect(brightness(colours.text) - brightness(colours.page)).toBeGreaterThan(150);
  expect(brightness(colours.cardText) - brightness(colours.card)).toBeGreaterThan(150);
  expect(Math.abs(brightness(colours.approve) - brightness(colours.approveText))).toBeGreaterThan(100);
  await page.screenshot({ path: "screenshots/dark.png" });

  // The same page on a light screen stays light.
  await page.emulateMedia({ colorScheme: "light" });
  const light = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  expect(brightness(light)).toBeGreaterThan(200);
});
