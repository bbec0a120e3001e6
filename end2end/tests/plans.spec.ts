import { testWithAgents, expect, say, cards, newChat } from "./fixtures";

// A planning agent: several changes are proposed as one plan; the calls themselves are gated too.
const AGENTS = `
[[agents]]
name = "support"
tools = ["list_orders", "get_order", "cancel_order", "process_refund"]

[[agents.gates]]
name = "plans"
kind = "plan"

[[agents.gates]]
name = "changes"
kind = "tools"
tools = ["cancel_order", "process_refund"]
`;

const test = testWithAgents(AGENTS);

test("a plan is approved once, edited to drop a step, and exactly its calls run without asking", async ({ page }) => {
  await newChat(page);
  await say(page, "cancel all orders of alice");
  const plan = page.locator('.tool-card[data-status="pending_approval"]');
  await expect(plan).toHaveCount(1);
  await expect(plan.locator(".summary")).toContainText("Plan of 3 steps: Cancel order 1001");
  await expect(plan.locator(".plan-steps li")).toHaveCount(3);
  // Three cancellations: the plan can be undone no better than they can.
  await expect(plan.locator(".assessment .reversibility")).toHaveText("Cannot be undone");
  await expect(plan.getByText(/Always allow/)).toHaveCount(0);
  await plan.screenshot({ path: "screenshots/plan.png" });

  // Its calls are listed once (no second copy as raw JSON), and editing drops a step by name.
  await expect(plan.locator("details.args")).toHaveCount(0);
  await plan.getByRole("button", { name: "Edit" }).click();
  const editing = plan.getByRole("list", { name: "Steps to approve" });
  await expect(editing.getByRole("listitem")).toHaveCount(3);
  const third = await editing.getByRole("listitem").nth(2).locator(".plan-args").textContent();
  await editing.getByRole("button", { name: "Remove step 3: cancel_order" }).click();
  await expect(editing.getByRole("listitem")).toHaveCount(2);
  await expect(editing).not.toContainText(third!);
  await plan.getByRole("button", { name: "Approve with these changes" }).click();

  const cancels = page
    .locator('.tool-card[data-status="succeeded"]')
    .filter({ has: page.locator("code.tool-name", { hasText: /^cancel_order$/ }) });
  await expect(cancels).toHaveCount(2);
  await expect(cancels.first().locator(".granted")).toHaveText("Allowed without asking: a step of the plan alice approved");
  await expect(page.locator('.tool-card[data-status="pending_approval"]')).toHaveCount(0);
  await expect(page.locator(".bubble-assistant").last()).toContainText("Canceled order 1002");
  // One-shot plan steps are not standing permissions.
  await expect(page.getByRole("region", { name: "Always allowed in this chat" })).toHaveCount(0);
  expect(await cards(page).count()).toBe(4); // list_orders, the plan, two cancellations
});
