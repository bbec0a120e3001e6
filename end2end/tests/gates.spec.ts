import { testWithAgents, expect, say, cards, newChat, watchCards, cardsRemoved, typeKeyByKey } from "./fixtures";

// An agent whose answers wait for a reviewer, with a token budget and a confidence threshold.
const AGENTS = `
[prices]
scripted = { input_per_million = 10.0, output_per_million = 30.0 }

[[agents]]
name = "support"
tools = ["list_orders", "get_order", "cancel_order", "process_refund"]

[[agents.gates]]
name = "budget"
kind = "budget"
token_threshold = 250

[[agents.gates]]
name = "unsure"
kind = "confidence"
confidence_threshold = 0.8

[[agents.gates]]
name = "answers"
kind = "final_response"
`;

const test = testWithAgents(AGENTS);

test("an unsure call shows how sure the agent is, and the final answer waits for a reviewer who may edit it", async ({ page }) => {
  await newChat(page);
  await say(page, "maybe cancel order 1005");
  const call = cards(page).first();
  await expect(call).toHaveAttribute("data-status", "pending_approval");
  await expect(call.locator(".assessment .confidence")).toHaveText("The agent is 40% sure of this call");
  await call.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(call).toHaveAttribute("data-status", "succeeded");

  // The answer is a card with the draft, not a message: the user has not got it yet.
  const answer = page.locator('.tool-card[data-status="pending_approval"]');
  await expect(answer.locator(".draft-answer")).toContainText("1005");
  // Only the agent's "I will cancel order 1005 once approved." so far.
  await expect(page.locator(".bubble-assistant")).toHaveCount(1);
  await expect(answer.getByText(/Always allow/)).toHaveCount(0);
  await answer.screenshot({ path: "screenshots/final-answer.png" });
  await answer.getByRole("button", { name: "Edit" }).click();
  const text = answer.getByRole("textbox", { name: /^text/ });
  // Written again as a person writes, key by key: each key stays in the field.
  await watchCards(page);
  await text.focus();
  await page.keyboard.press("ControlOrMeta+A");
  await typeKeyByKey(page, text, "", "Order 1005 is canceled. Anything else?");
  expect(await cardsRemoved(page), "no card left the page while typing").toBe(0);
  await answer.getByRole("button", { name: "Approve with these changes" }).click();
  await expect(page.locator(".bubble-assistant")).toHaveCount(2);
  await expect(page.locator(".bubble-assistant").last()).toHaveText("Order 1005 is canceled. Anything else?");
  // The reviewer's own edit is not reported as a decision made elsewhere.
  await expect(cards(page).nth(1)).toHaveAttribute("data-status", "succeeded");
  await expect(page.locator(".superseded")).toHaveCount(0);
});

test("over its token budget, a call waits and its card shows the spend against the limit", async ({ page }) => {
  await newChat(page);
  await say(page, "cancel all orders of alice");
  await expect(page.locator('.tool-card[data-status="pending_approval"]')).toHaveCount(3);
  const card = page.locator('.tool-card[data-status="pending_approval"]').first();
  await expect(card.locator(".assessment .spend")).toHaveText(/^Spent so far in this task: [\d,]+ tokens \(\$[\d.]+\), over its budget of 250 tokens$/);
  await card.screenshot({ path: "screenshots/budget.png" });
});
