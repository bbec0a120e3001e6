// A session that ends (expired, logged out in another tab, revoked) leaves a page that says so,
// keeps what was typed, and logs back in to the same place.
import { appendFileSync, cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test, guarded, Server, logIn, expect, newChat, say, cards, waitForHydration, allowConsole, PASSWORD } from "./fixtures";

test("when the session ends the page says so, keeps the typed text, and logging in again returns to the chat", async ({ page, server }) => {
  // The refused requests themselves are what the browser reports.
  allowConsole(/status of 401/);
  await newChat(page);
  const chat = new URL(page.url()).pathname;
  await page.locator("#composer-input").fill("and then cancel order 1002");
  await expect(page.locator(".whoami")).toContainText("alice");

  // Logged out elsewhere (the same cookie), then the live stream drops: its reconnect is refused.
  expect((await page.context().request.delete(`${server.url}/api/session`)).status()).toBe(204);
  await server.restart();
  const notice = page.locator(".session-ended");
  await expect(notice).toContainText("Your session has ended");
  await expect(page.locator(".whoami")).toHaveCount(0);
  await expect(page.getByText("Reconnecting…")).toHaveCount(0);
  await page.screenshot({ path: "screenshots/session-ended.png" });

  await notice.getByRole("link", { name: "Log in again" }).click();
  await expect(page).toHaveURL(/\/login\?next=/);
  await waitForHydration(page);
  await page.getByLabel("User name").fill("alice");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Log in" }).click();
  await expect(page).toHaveURL(new RegExp(`${chat}$`));
  await waitForHydration(page);
  await expect(page.locator("#composer-input")).toHaveValue("and then cancel order 1002");
  await expect(page.locator(".session-ended")).toHaveCount(0);

  // A decision refused for want of a session says so too, and decides nothing.
  await page.locator("#composer-input").fill("");
  await say(page, "refund order 1001");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  expect((await page.context().request.delete(`${server.url}/api/session`)).status()).toBe(204);
  await card.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(page.locator(".session-ended")).toContainText("Your session has ended");
  await expect(card).toHaveAttribute("data-status", "pending_approval");
});

guarded("a server upgraded under an open page offers a reload instead of leaving a dead page", async ({ page }) => {
  // A copy of the site this test can change: a new build is a bundle with other contents.
  const site = mkdtempSync(path.join(tmpdir(), "countersign-site-"));
  cpSync(process.env.COUNTERSIGN_SITE_ROOT!, site, { recursive: true });
  const server = new Server(undefined, { COUNTERSIGN_SITE_ROOT: site });
  server.addUser("alice");
  await server.start();
  try {
    await logIn(page.context(), server, "alice");
    await page.goto(`${server.url}/`);
    await waitForHydration(page);
    const first = await page.locator('meta[name="countersign-build"]').getAttribute("content");
    const bundle = await page.request.get(`${server.url}/pkg/${first}/countersign.wasm`);
    expect(bundle.headers()["cache-control"]).toBe("public, max-age=31536000, immutable");
    await page.getByRole("button", { name: "New chat" }).click();
    await expect(page).toHaveURL(/\/c\/[0-9a-f-]+$/);
    await waitForHydration(page);

    appendFileSync(path.join(site, "pkg", "countersign.css"), "\n/* the next release */\n");
    await server.restart();
    await say(page, "list orders");
    const notice = page.locator(".update-available");
    await expect(notice).toContainText("A new version of Countersign is available.");
    await notice.getByRole("button", { name: "Reload" }).click();
    await waitForHydration(page);
    const second = await page.locator('meta[name="countersign-build"]').getAttribute("content");
    expect(second).not.toBe(first);
    await expect(page.locator(".update-available")).toHaveCount(0);
    await expect(page.locator(".bubble-user")).toHaveText(["list orders"]);
  } finally {
    await server.stop();
    server.cleanup();
    rmSync(site, { recursive: true, force: true });
  }
});
