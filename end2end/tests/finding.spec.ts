import { test, expect, newChat, say, cards, waitForHydration, logIn } from "./fixtures";
import type { Locator, Page } from "@playwright/test";

/** `locator` is on screen and not under the sticky composer and its Stop button (once the page has scrolled). */
async function clearOfComposer(page: Page, locator: Locator): Promise<void> {
  await expect(async () => {
    const box = (await locator.boundingBox())!;
    const composer = (await page.locator(".chat-footer").boundingBox())!;
    const viewport = page.viewportSize()!;
    expect(box.y).toBeGreaterThanOrEqual(0);
    expect(box.y + box.height).toBeLessThanOrEqual(composer.y + 1);
    expect(box.y + box.height).toBeLessThanOrEqual(viewport.height);
  }).toPass({ timeout: 3_000 });
}

test("a new chat focuses the composer; an arriving card is scrolled into view above the composer and takes focus; the waiting line jumps to it", async ({ page }) => {
  await page.setViewportSize({ width: 1000, height: 560 });
  await newChat(page);
  await expect(page.locator("#composer-input")).toBeFocused();
  // A thread longer than the window.
  for (const n of [1, 2, 3]) {
    await say(page, "hello");
    await expect(page.locator(".bubble-assistant")).toHaveCount(n);
  }
  await clearOfComposer(page, page.locator(".bubble-assistant").last());

  await say(page, "refund order 1001");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await expect(card).toBeFocused();
  await clearOfComposer(page, card.locator(".actions"));

  // Scrolled away and focus elsewhere: "Waiting for your decision" brings the card back.
  await page.evaluate(() => { window.scrollTo(0, 0); (document.activeElement as HTMLElement | null)?.blur(); });
  await expect(card.locator(".actions")).not.toBeInViewport();
  await page.getByRole("button", { name: "Waiting for your decision on 1 tool call" }).click();
  await expect(card).toBeFocused();
  await expect(card.locator(".actions")).toBeInViewport();
  // From the focused card the shortcut decides it.
  await page.keyboard.press("a");
  await expect(card).toHaveAttribute("data-status", "succeeded");
});

test("the skip link passes the top bar and the chat list", async ({ page }) => {
  await newChat(page);
  await say(page, "refund order 1001");
  await expect(cards(page).first()).toHaveAttribute("data-status", "pending_approval");
  await page.reload();
  await waitForHydration(page);
  await page.keyboard.press("Tab");
  const skip = page.getByRole("link", { name: "Skip to content" });
  await expect(skip).toBeFocused();
  await expect(skip).toBeInViewport();
  await page.keyboard.press("Enter");
  await expect(page.locator("#content")).toBeFocused();
  await page.keyboard.press("Tab");
  const inChat = await page.evaluate(() => !!document.activeElement?.closest("section.chat"));
  expect(inChat).toBe(true);
  await expect(cards(page).first()).toBeFocused();
});

test("at phone width the chat list is a drawer, targets are at least 44 px and a waiting composer is small", async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto("/");
  await waitForHydration(page);
  // On the home page the list is the content: open.
  await expect(page.getByRole("button", { name: "New chat" })).toBeVisible();
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveURL(/\/c\//);
  await waitForHydration(page);
  // Inside a chat the list folds away behind "Chats".
  const toggle = page.locator(".drawer-toggle");
  await expect(toggle).toBeVisible();
  await expect(page.getByRole("button", { name: "New chat" })).toBeHidden();
  await say(page, "refund order 1001 and 1002");
  await expect(cards(page)).toHaveCount(2);
  const first = cards(page).first();
  await expect(first).toBeFocused();
  await expect(first.locator(".actions")).toBeInViewport();

  // The waiting composer keeps only its status line.
  await expect(page.locator("#composer-input")).toBeHidden();
  const composer = (await page.locator("form.composer").boundingBox())!;
  expect(composer.height).toBeLessThan(80);

  // Every visible control in the chat is at least 44 px tall (the checkbox through its label).
  const small = await page.evaluate(() => {
    const found: string[] = [];
    const targets = document.querySelectorAll("main button, main a, main select, main input:not([type=checkbox]), main label.always, main summary, header.top-bar a, header.top-bar button");
    for (const el of Array.from(targets)) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || !(el as HTMLElement).checkVisibility()) continue;
      if (box.height < 43.5) found.push(`${el.tagName} "${(el.textContent ?? "").trim().slice(0, 30)}" ${box.height}px`);
    }
    return found;
  });
  expect(small).toEqual([]);
  await expect(toggle).toContainText("2");
  await page.screenshot({ path: "screenshots/phone-chat.png" });

  // The drawer opens, and choosing a chat closes it again.
  await toggle.click();
  await expect(page.getByRole("button", { name: "New chat" })).toBeVisible();
  await page.screenshot({ path: "screenshots/phone-drawer.png" });
  await page.locator(".conversation-list a").first().click();
  await expect(page.getByRole("button", { name: "New chat" })).toBeHidden();
});

test("on a phone: a two-row top bar, the chat drawer toggles on the home page too, Stop stays above the composer, and the audit trail keeps every column", async ({ page, browser, server }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto("/");
  await waitForHydration(page);
  const bar = (await page.locator("header.top-bar").boundingBox())!;
  expect(bar.height).toBeLessThan(110); // two rows of 44 px targets, not three
  const toggle = page.locator(".drawer-toggle");
  await expect(page.getByRole("button", { name: "New chat" })).toBeVisible();
  await toggle.click();
  await expect(page.getByRole("button", { name: "New chat" })).toBeHidden();
  await toggle.click();
  await expect(page.getByRole("button", { name: "New chat" })).toBeVisible();

  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveURL(/\/c\//);
  await waitForHydration(page);
  await say(page, "refund order 1001 and 1002");
  await expect(cards(page)).toHaveCount(2);
  const stop = page.getByRole("button", { name: "Stop this turn" });
  await expect(stop).toBeInViewport();
  // Whatever is scrolled, Stop is in the footer the composer is in: nothing covers it.
  await page.mouse.wheel(0, -300);
  await expect(stop).toBeInViewport();
  const hit = await stop.evaluate((el) => {
    const box = el.getBoundingClientRect();
    return document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2) === el;
  });
  expect(hit).toBe(true);

  const admin = await browser.newContext({ viewport: { width: 390, height: 844 }, baseURL: server.url });
  await logIn(admin, server, "root");
  const audit = await admin.newPage();
  await audit.goto("/audit");
  await waitForHydration(audit);
  const entry = audit.locator(".audit-table tbody tr").first();
  const details = entry.locator('td[data-label="Details"]');
  await expect(details).toBeInViewport();
  const box = (await details.boundingBox())!;
  expect(box.x + box.width).toBeLessThanOrEqual(390);
  await audit.screenshot({ path: "screenshots/phone-audit.png" });
  await admin.close();
});

test("New chat twice makes one chat, and chats with the same title say when they started", async ({ page }) => {
  await page.goto("/");
  await waitForHydration(page);
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveURL(/\/c\//);
  const first = page.url();
  await waitForHydration(page);
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveURL(first);
  await expect(page.locator(".conversation-list li")).toHaveCount(1);
  await expect(page.locator(".conversation-list .chat-started")).toHaveText(/^started \d+ s ago$/);
  // Once it has a message, New chat makes another.
  await say(page, "list orders");
  await expect(page.locator(".bubble-assistant")).not.toHaveCount(0);
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).not.toHaveURL(first);
  await expect(page.locator(".conversation-list li")).toHaveCount(2);
});
