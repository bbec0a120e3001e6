import { expect } from "@playwright/test";
import { logIn, say, newChat, waitForHydration, test } from "./fixtures";

test("desktop notifications, once turned on, show an approval that arrives while the tab is in the background", async ({ page, browser, server }) => {
  // Permission granted as a person would grant it when the browser asks.
  const root = await browser.newContext({ baseURL: server.url, permissions: ["notifications"] });
  try {
    await logIn(root, server, "root");
    const queue = await root.newPage();
    // Record what the page shows through the real Notification API, and let the test say when
    // the tab is in the background (a headless tab is never hidden by itself).
    await queue.addInitScript(() => {
      const w = window as any;
      const Real = window.Notification;
      w.__shown = [];
      class Recorded extends Real {
        constructor(title: string, options?: NotificationOptions) {
          super(title, options);
          w.__shown.push({ title, body: options?.body, tag: options?.tag });
        }
      }
      Object.defineProperty(Recorded, "permission", { get: () => Real.permission });
      (Recorded as any).requestPermission = Real.requestPermission.bind(Real);
      w.Notification = Recorded;
      Object.defineProperty(document, "hidden", { get: () => w.__hidden ?? false });
    });
    await queue.goto("/approvals");
    await waitForHydration(queue);
    await queue.getByRole("button", { name: "Notify me" }).click();
    await expect(queue.getByRole("button", { name: "Notifications on" })).toBeVisible();

    // In the foreground nothing pops up: the queue itself shows it.
    await newChat(page);
    await say(page, "refund order 1001");
    await expect(queue.locator(".queue-item")).toHaveCount(1);
    expect(await queue.evaluate(() => (window as any).__shown)).toEqual([]);

    // In the background, the next one arrives as a notification.
    await queue.evaluate(() => ((window as any).__hidden = true));
    await newChat(page);
    await say(page, "refund order 1002");
    await expect
      .poll(() => queue.evaluate(() => (window as any).__shown.map((n: any) => `${n.title}: ${n.body}`)))
      .toEqual([expect.stringMatching(/^Approval needed: Refund .* on order 1002/)]);

    // The choice is kept in this browser.
    await queue.reload();
    await waitForHydration(queue);
    await expect(queue.getByRole("button", { name: "Notifications on" })).toBeVisible();
    await queue.getByRole("button", { name: "Notifications on" }).click();
    await expect(queue.getByRole("button", { name: "Notify me" })).toBeVisible();
  } finally {
    await root.close();
  }
});
