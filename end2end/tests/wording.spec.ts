import { expect } from "@playwright/test";
import { Server, logIn, say, cards, waitForHydration, test, newChat, REFUNDS_GATE, guarded as base } from "./fixtures";

// An agent whose approvals time out after 2 seconds, so a timeout can be watched.
const AGENTS = `
[defaults]
timeout_secs = 2
timeout_action = "reject"
${REFUNDS_GATE}`;

base("a timeout reads as a timeout, not as someone's rejection", async ({ page }) => {
  const server = new Server(AGENTS);
  server.addUser("alice");
  await server.start();
  try {
    await logIn(page.context(), server, "alice");
    await page.goto(server.url);
    await waitForHydration(page);
    await page.getByRole("button", { name: "New chat" }).click();
    await expect(page).toHaveURL(/\/c\//);
    await waitForHydration(page);
    await say(page, "refund order 1001");
    const card = cards(page).first();
    await expect(card).toHaveAttribute("data-status", "pending_approval");
    await expect(card).toHaveAttribute("data-status", "expired", { timeout: 15_000 });
    await expect(card.locator(".status")).toHaveText("Timed out");
    await expect(card.locator(".decision")).toHaveText("No one decided within 2 seconds, so the call did not run.");
    // The same words after a reload (folded from the stored events).
    await page.reload();
    await expect(cards(page).first().locator(".decision")).toHaveText("No one decided within 2 seconds, so the call did not run.");
  } finally {
    await server.stop();
    server.cleanup();
  }
});

test("tool names read as words with the technical name beside them; a network error on a card clears when the connection is back", async ({ page, server }) => {
  await newChat(page);
  await say(page, "cancel order 1003");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await expect(card.locator(".tool-title")).toHaveText("Cancel order");
  await expect(card.locator(".tool-name")).toHaveText("cancel_order");

  // The decision cannot reach the server: the card says so.
  await page.route("**/approve", (route) => route.abort("connectionrefused"));
  await card.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(card.getByRole("alert")).toContainText("cannot reach the server");
  // The connection comes back (the stream reconnects after a restart): the stale error goes.
  await page.unroute("**/approve");
  await server.restart();
  await expect(page.locator(".link-state")).toHaveAttribute("data-state", "live", { timeout: 20_000 });
  await expect(card.getByRole("alert")).toHaveCount(0);
  await card.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(card).toHaveAttribute("data-status", "succeeded");
});

test("a call refused because it was rejected before says so in plain words, never the instruction meant for the model", async ({ page }) => {
  await newChat(page);
  await say(page, "cancel order 1003");
  const first = cards(page).first();
  await expect(first).toHaveAttribute("data-status", "pending_approval");
  await first.getByRole("button", { name: "Reject", exact: true }).click();
  await first.getByLabel("Reason (optional, the agent sees it)").fill("keep it");
  await first.getByRole("button", { name: "Confirm reject" }).click();
  await expect(first).toHaveAttribute("data-status", "rejected");
  await expect(page.locator("#composer-input")).toBeEnabled();

  await say(page, "cancel order 1003");
  const second = cards(page).nth(1);
  await expect(second).toHaveAttribute("data-status", "rejected");
  await expect(second.locator(".decision")).toHaveText("Not run: this exact call was already rejected earlier in this chat.");
  await expect(page.locator("body")).not.toContainText("do not propose it again");
});
