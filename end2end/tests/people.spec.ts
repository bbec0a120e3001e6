import { test, expect, newChat, say, cards, waitForHydration, logIn, PASSWORD, allowConsole } from "./fixtures";

test("logging in and out", async ({ browser, server }) => {
  // The wrong password.
  allowConsole(/status of 401/);
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${server.url}/`);
  await expect(page).toHaveURL(/\/login\?next=\/$/);
  await waitForHydration(page);
  await page.getByLabel("User name").fill("alice");
  await page.getByLabel("Password").fill("not-the-password");
  await page.getByRole("button", { name: "Log in" }).click();
  await expect(page.getByRole("alert")).toHaveText("wrong user name or password");
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Log in" }).click();
  await expect(page).toHaveURL(`${server.url}/`);
  await expect(page.locator(".whoami")).toHaveText("alice");
  await page.screenshot({ path: "screenshots/logged-in.png" });
  await page.getByRole("button", { name: "Log out" }).click();
  await expect(page).toHaveURL(/\/login\?signed_out=1$/);
  await expect(page.getByRole("status")).toHaveText("You are signed out.");
  await page.goto(`${server.url}/approvals`);
  await expect(page).toHaveURL(/\/login\?next=\/approvals$/);
  await context.close();
});

test("an admin approves from the queue and the user's chat updates live", async ({ page, browser, server }) => {
  await newChat(page);
  await say(page, "refund order 1001 and 1002");
  await expect(cards(page)).toHaveCount(2);
  await expect(cards(page).nth(1)).toHaveAttribute("data-status", "pending_approval");

  const adminContext = await browser.newContext();
  await logIn(adminContext, server, "root");
  const admin = await adminContext.newPage();
  await admin.goto(`${server.url}/approvals`);
  await waitForHydration(admin);
  const items = admin.locator(".queue-item");
  await expect(items).toHaveCount(2);
  await expect(admin.locator(".queue-group-title")).toContainText("alice");
  const refund1002row = items.filter({ hasText: "order 1002" });
  await refund1002row.locator(".queue-row > summary").click();
  await refund1002row.getByRole("button", { name: "Approve", exact: true }).click();

  // Decided ones leave the queue; the user's chat follows without a reload.
  await expect(items).toHaveCount(1);
  const refund1002 = cards(page).filter({ hasText: "order 1002" });
  await expect(refund1002).toHaveAttribute("data-status", "succeeded");
  await expect(refund1002.locator(".decision")).toHaveText("Approved by root");

  // And a decision in the chat leaves the queue live too.
  await cards(page).filter({ hasText: "order 1001" }).getByRole("button", { name: "Reject", exact: true }).click();
  await cards(page).filter({ hasText: "order 1001" }).getByRole("button", { name: "Confirm reject" }).click();
  await expect(items).toHaveCount(0);
  await expect(admin.getByText("Nothing here.")).toBeVisible();

  await admin.getByRole("link", { name: "Decided" }).click();
  const rows = admin.locator("table.decided tbody tr");
  await expect(rows).toHaveCount(2);
  await expect(rows.filter({ hasText: "order 1002" })).toContainText("root");
  await expect(rows.filter({ hasText: "order 1002" }).locator(".status")).toHaveText("Approved");
  await expect(rows.filter({ hasText: "order 1001" }).locator(".status")).toHaveText("Rejected");
  await expect(rows.filter({ hasText: "order 1001" })).toContainText("alice");
  await expect(rows.first().locator("time")).toHaveText(/^\d+ s ago$/);
  await adminContext.close();
});

test("a user cannot open another user's chat", async ({ page, browser, server }) => {
  // The other user's chat: not found for them.
  allowConsole(/status of 404/);
  await newChat(page);
  await say(page, "cancel order 1003");
  await expect(cards(page).first()).toHaveAttribute("data-status", "pending_approval");
  const alicesChat = page.url();

  const bobContext = await browser.newContext();
  await logIn(bobContext, server, "bob");
  const bob = await bobContext.newPage();
  const response = await bob.goto(alicesChat);
  expect(response?.status()).toBe(404);
  await expect(bob.getByRole("alert")).toHaveText("This conversation does not exist.");
  await expect(bob.locator(".tool-card")).toHaveCount(0);
  await bob.goto(`${server.url}/approvals`);
  await expect(bob.getByText("Nothing here.")).toBeVisible();
  await bobContext.close();
});

test("an admin reads another user's chat but has no composer there", async ({ page, browser, server }) => {
  await newChat(page);
  await say(page, "cancel order 1003");
  await expect(cards(page).first()).toHaveAttribute("data-status", "pending_approval");
  const alicesChat = page.url();

  // Only its owner writes in a chat (the API answers an admin's message with 404): root reads
  // alice's chat and is told so instead of being offered a composer.
  const adminContext = await browser.newContext();
  await logIn(adminContext, server, "root");
  const admin = await adminContext.newPage();
  await admin.goto(alicesChat);
  await waitForHydration(admin);
  await expect(admin.locator(".tool-card")).toHaveCount(1);
  await expect(admin.getByText("This is alice's chat: only alice can write in it.")).toBeVisible();
  await expect(admin.locator("form.composer")).toHaveCount(0);
  await expect(admin.locator("#composer-input")).toHaveCount(0);
  await expect(admin.getByRole("button", { name: "Send" })).toHaveCount(0);
  // alice still has hers.
  await expect(page.locator("#composer-input")).toBeVisible();
  await expect(page.getByText("only alice can write in it")).toHaveCount(0);
  await adminContext.close();
});

test("the audit page shows the chain verifies, reads as a table with relative times, filters, and folds the JSON", async ({ browser, server, page }) => {
  await newChat(page);
  await say(page, "cancel order 1003");
  await cards(page).first().getByRole("button", { name: "Approve", exact: true }).click();
  await expect(cards(page).first()).toHaveAttribute("data-status", "succeeded");
  const adminContext = await browser.newContext();
  await logIn(adminContext, server, "root");
  const admin = await adminContext.newPage();
  await admin.goto(`${server.url}/audit`);
  await expect(admin.locator(".chain-ok")).toContainText("The chain verifies");
  await expect(admin.locator(".audit-table")).toContainText("approval.decided");
  // Times read as "… s ago", the exact time in the title; each entry's JSON is folded behind a gist.
  const first = admin.locator(".audit-table tbody tr").first();
  await expect(first.locator("time")).toHaveText(/^\d+ s ago$/);
  await expect(first.locator("time")).toHaveAttribute("title", /^\d{4}-\d\d-\d\dT/);
  await expect(first.locator("details.audit-data")).not.toHaveAttribute("open", "");
  await expect(first.locator("details.audit-data pre")).toBeHidden();
  await first.locator("details.audit-data summary").click();
  await expect(first.locator("details.audit-data pre")).toBeVisible();
  // Filter by kind: only decisions are left.
  await admin.getByLabel("Kind").selectOption("approval.decided");
  await admin.getByRole("button", { name: "Filter" }).click();
  await expect(admin).toHaveURL(/kind=approval.decided/);
  const kinds = admin.locator(".audit-table tbody td:nth-child(3)");
  await expect(kinds).toHaveText(["approval.decided"]);
  await expect(admin.locator(".audit-table tbody tr").first()).toContainText("alice");
  await admin.screenshot({ path: "screenshots/audit.png" });
  await adminContext.close();
});
