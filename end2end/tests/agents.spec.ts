import { test, expect, newChat, say, cards } from "./fixtures";

test("confirming in the chat: the agent asks, an unclear answer is asked again, yes runs the refund", async ({ page, server }) => {
  await newChat(page, "concierge");
  await expect(page.locator(".agent-name")).toHaveText("Agent: concierge");
  await say(page, "refund order 1001");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await expect(card.locator(".in-chat-note")).toHaveText("Waiting for your answer in the chat: reply yes or no.");
  await expect(card.getByRole("button", { name: "Approve", exact: true })).toHaveCount(0);
  await expect(page.locator(".bubble-assistant").last()).toContainText("Shall I go ahead? Reply yes or no.");
  const input = page.locator("#composer-input");
  await expect(input).toBeEnabled();
  await expect(input).toHaveAttribute("placeholder", "Reply yes or no");

  await say(page, "hmm, not sure");
  await expect(page.locator(".bubble-assistant").last()).toContainText("I need a clear yes or no");
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await page.locator(".thread").screenshot({ path: "screenshots/chat-confirmation.png" });

  await say(page, "yes");
  await expect(card).toHaveAttribute("data-status", "succeeded");
  await expect(card.locator(".decision")).toContainText("alice");
  await expect(page.locator(".bubble-user").last()).toHaveText("yes");
  // The card reads as what the yes did: below it, live and after a reload.
  const belowTheYes = () =>
    page.locator(".bubble-user").last().evaluate((yes) => {
      const card = document.querySelector(".tool-card");
      return card !== null && (yes.compareDocumentPosition(card) & Node.DOCUMENT_POSITION_FOLLOWING) !== 0;
    });
  await expect.poll(belowTheYes).toBe(true);
  const order = await (await page.request.get(`${server.url}/api/orders/1001`)).json();
  expect(order.status).toBe("refunded");

  // After a reload every bubble and the card come back from the stored history.
  await page.reload();
  await expect(cards(page).first()).toHaveAttribute("data-status", "succeeded");
  await expect(page.locator(".bubble-assistant", { hasText: "I need a clear yes or no" })).toHaveCount(1);
  expect(await belowTheYes()).toBe(true);
});

test("a supervisor delegates: the worker's card is marked with its name and the supervisor answers after approval", async ({ page, server }) => {
  await newChat(page, "supervisor");
  await say(page, "refund order 1002");
  const ask = cards(page).nth(0);
  const refund = cards(page).nth(1);
  await expect(ask.locator(".tool-name")).toHaveText("ask_support");
  await expect(refund.locator(".tool-name")).toHaveText("process_refund");
  await expect(refund.locator(".agent")).toHaveText("by support");
  await expect(refund).toHaveAttribute("data-status", "pending_approval");
  await expect(page.locator(".composer-status")).toHaveText("Waiting for your decision on 1 tool call");
  await page.locator(".thread").screenshot({ path: "screenshots/sub-agent.png" });

  await refund.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(refund).toHaveAttribute("data-status", "succeeded");
  await expect(ask).toHaveAttribute("data-status", "succeeded");
  await expect(page.locator(".bubble-worker .worker-name").last()).toHaveText("support (sub-agent)");
  await expect(page.locator(".bubble-assistant").last()).toContainText("support: Refunded");
  await expect(page.locator("#composer-input")).toBeEnabled();
  // The supervisor reports its worker's result once.
  await expect(page.locator(".bubble-assistant:not(.bubble-worker)", { hasText: "Refunded" })).toHaveCount(1);
  const order = await (await page.request.get(`${server.url}/api/orders/1002`)).json();
  expect(order.status).toBe("refunded");
});

test("the sidebar counts the calls waiting in each chat, and inside a chat the picker names that chat's agent", async ({ page }) => {
  await newChat(page, "concierge");
  await expect(page.getByLabel("New chat with")).toHaveValue("concierge");

  await newChat(page);
  await expect(page.getByLabel("New chat with")).toHaveValue("support");
  const current = page.locator(".conversation-list li.current");
  await expect(current.locator(".pending-count")).toHaveCount(0);
  await say(page, "refund order 1001 and 1002");
  await expect(cards(page)).toHaveCount(2);
  // The open chat's count follows its cards live, and is there after a reload.
  await expect(current.locator(".pending-count")).toHaveText("2");
  await expect(current.locator(".pending-count")).toHaveAttribute("aria-label", "2 calls wait for a decision");
  await page.reload();
  await expect(page.locator(".conversation-list li.current .pending-count")).toHaveText("2");
  await page.locator(".sidebar").screenshot({ path: "screenshots/sidebar-pending.png" });
});
