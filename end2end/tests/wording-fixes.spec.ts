// What the chat and the admin pages say, as people reported it wrong: an answered question
// counted as an edited approval, a "While you were writing" notice over nothing written, a
// four-eyes requester asked for a decision she may not make, admin controls shown to non-admins.
import { expect } from "@playwright/test";
import { logIn, say, cards, test, testWithAgents, newChat, waitForHydration, REFUNDS_GATE } from "./fixtures";

test("a turn with an answered question and a rejected refund counts a question answered, not an edited approval", async ({ page }) => {
  await newChat(page);
  await say(page, "refund an order");
  const question = page.locator(".question-card");
  await expect(question).toHaveAttribute("data-status", "pending_approval");
  await question.getByLabel("Your answer").fill("1002");
  await question.getByRole("button", { name: "Send answer" }).click();
  await expect(question.locator(".decision")).toHaveText("Answered: 1002");
  const refund = cards(page).filter({ hasText: "order 1002" }).last();
  await expect(refund).toHaveAttribute("data-status", "pending_approval");
  await refund.getByRole("button", { name: "Reject", exact: true }).click();
  await refund.getByRole("button", { name: "Confirm reject" }).click();
  await expect(refund).toHaveAttribute("data-status", "rejected");

  const summary = page.locator(".turn-summary");
  await expect(summary).toHaveText(/^1 question answered · 1 approval: 1 rejected · waited .+ for decisions · the turn took .+$/);
  await expect(summary).not.toContainText("edited");
  await expect(summary).not.toContainText("2 approvals");
  // The same line after a reload (folded from the stored events on the server).
  await page.reload();
  await expect(page.locator(".turn-summary")).toHaveText(/^1 question answered · 1 approval: 1 rejected/);
});

test("a second tab that opened Edit and changed nothing shows the decision made in the first, with no 'While you were writing'", async ({ page }) => {
  await newChat(page);
  await say(page, "refund order 1001");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");

  // The same user's second tab opens Edit on the card and types nothing.
  const second = await page.context().newPage();
  await second.goto(page.url());
  await waitForHydration(second);
  const secondCard = cards(second).first();
  await expect(secondCard).toHaveAttribute("data-status", "pending_approval");
  await secondCard.getByRole("button", { name: "Edit" }).click();
  await expect(secondCard.getByLabel(/amount/)).toBeFocused();

  // The first tab approves.
  await card.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(card).toHaveAttribute("data-status", "succeeded");

  // The second tab just shows the decided call: nothing typed, nothing lost.
  await expect(secondCard).not.toHaveAttribute("data-status", "pending_approval");
  await expect(secondCard.locator(".decision")).toContainText("Approved");
  await expect(secondCard.locator(".superseded")).toHaveCount(0);
  await expect(second.getByText(/While you were writing/)).toHaveCount(0);
  await expect(second.getByText(/decided while you were writing/)).toHaveCount(0);
  await second.close();
});

// Four-eyes: refunds need someone other than the person who asked for them.
const FOUR_EYES = `${REFUNDS_GATE}separate_requester = true
`;

testWithAgents(FOUR_EYES)("a four-eyes requester's composer says the call waits for another person to approve it", async ({ page }) => {
  await newChat(page);
  await say(page, "refund order 1001");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await expect(card.locator(".four-eyes")).toContainText("someone else must approve it");
  const status = page.locator(".composer-status");
  await expect(status).toHaveText("Waiting for another person to approve 1 tool call");
  await expect(status).not.toContainText("your decision");
  // She may still reject it: the line still leads to the card.
  await expect(status.getByRole("button")).toBeVisible();
});

test("a non-admin on /audit and /groups is told only that they are for admins; an admin still gets the controls", async ({ page, browser, server }) => {
  // Alice is no admin: no export link, no filters, no entries, no group forms (and no request
  // the server refuses: a 403 in the console would fail the test).
  await page.goto("/audit");
  await waitForHydration(page);
  const audit = page.locator("section.audit");
  await expect(audit.locator(".not-admin")).toHaveText("Only admins may see the audit trail.");
  await expect(page.getByRole("link", { name: "Export as JSON Lines" })).toHaveCount(0);
  await expect(audit.locator("form.filters")).toHaveCount(0);
  await expect(page.getByRole("button", { name: "Filter" })).toHaveCount(0);
  await expect(audit.locator(".audit-table")).toHaveCount(0);
  await expect(audit.getByText("only admins may do this")).toHaveCount(0);

  await page.goto("/groups");
  await waitForHydration(page);
  const groups = page.locator("section.groups");
  await expect(groups.locator(".not-admin")).toHaveText("Only admins may see and change the groups of approvers.");
  await expect(page.getByRole("button", { name: "Create group" })).toHaveCount(0);
  await expect(groups.locator("form")).toHaveCount(0);
  await expect(groups.getByText("only admins may do this")).toHaveCount(0);

  // Root (admin) still gets everything.
  const root = await browser.newContext({ baseURL: server.url });
  try {
    await logIn(root, server, "root");
    const admin = await root.newPage();
    await admin.goto("/audit");
    await waitForHydration(admin);
    await expect(admin.getByRole("link", { name: "Export as JSON Lines" })).toBeVisible();
    await expect(admin.getByRole("button", { name: "Filter" })).toBeVisible();
    await expect(admin.locator(".chain")).toBeVisible();
    await expect(admin.locator(".not-admin")).toHaveCount(0);
    await admin.goto("/groups");
    await waitForHydration(admin);
    await expect(admin.getByRole("button", { name: "Create group" })).toBeEnabled();
    await expect(admin.locator(".not-admin")).toHaveCount(0);
  } finally {
    await root.close();
  }
});
