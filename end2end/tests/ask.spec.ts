import { expect } from "@playwright/test";
import { say, cards, test, newChat, typeKeyByKey } from "./fixtures";

test("the agent's question is a card with an answer box; the answer carries the turn on", async ({ page }) => {
  await newChat(page);
  await say(page, "refund an order");
  const question = page.locator(".question-card");
  await expect(question).toHaveAttribute("data-status", "pending_approval");
  await expect(question.getByRole("heading")).toHaveText("Which order should I refund? Give its number.");
  // A question is answered, not approved or edited.
  await expect(question.getByRole("button", { name: "Approve", exact: true })).toHaveCount(0);
  await expect(page.locator(".composer-status")).toHaveText("Waiting for your answer to the agent's question");
  // Typed as a person types: each key stays in the box.
  const answer = question.getByLabel("Your answer");
  await answer.focus();
  await typeKeyByKey(page, answer, "", "1002");
  await question.screenshot({ path: "screenshots/question.png" });
  await question.getByRole("button", { name: "Send answer" }).click();
  await expect(question.locator(".decision")).toHaveText("Answered: 1002");
  // The refund of order 1002 now waits for approval like any refund.
  const refund = cards(page).filter({ hasText: "order 1002" }).last();
  await expect(refund).toHaveAttribute("data-status", "pending_approval");
});

test("a question with options is answered with one click, and the answer survives a reload", async ({ page }) => {
  await newChat(page);
  await say(page, "ask me which order to look up");
  const question = page.locator(".question-card");
  await expect(question.getByRole("group", { name: "Answers" }).getByRole("button")).toHaveText(["1001", "1002", "1003"]);
  await question.getByRole("button", { name: "1003" }).click();
  await expect(question.locator(".decision")).toHaveText("Answered: 1003");
  await expect(page.locator(".bubble-assistant").last()).toContainText("1003");
  await page.reload();
  await expect(page.locator(".question-card .decision")).toHaveText("Answered: 1003");
});
