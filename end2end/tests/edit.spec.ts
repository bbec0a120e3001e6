import { test, expect, newChat, say, cards, allowConsole } from "./fixtures";

test("editing args: invalid JSON and schema violations show inline; a valid edit runs with the edited value", async ({ page, server }) => {
  // The invalid edit the server refuses.
  allowConsole(/status of 422/);
  await newChat(page);
  await say(page, "refund order 1001");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await card.getByRole("button", { name: "Edit" }).click();
  await card.getByRole("button", { name: "Edit as JSON" }).click();
  const editor = card.getByLabel("Arguments (JSON)");
  const submit = card.getByRole("button", { name: "Approve with these changes" });

  await editor.fill('{"order_id": 1001, "amount": ');
  await submit.click();
  await expect(card.getByRole("alert")).toContainText("Not valid JSON");
  await expect(card).toHaveAttribute("data-status", "pending_approval");

  await editor.fill('{"order_id": 1001, "amount": -5}');
  await submit.click();
  await expect(card.getByRole("alert")).toContainText("do not match the schema");
  await expect(card.getByRole("alert")).toContainText("/amount: must be more than 0");
  await expect(card).toHaveAttribute("data-status", "pending_approval");

  await editor.fill('{"order_id": 1001, "amount": 10}');
  await expect(card.locator(".diff-added")).toContainText('"amount": 10');
  await submit.click();
  await expect(card).toHaveAttribute("data-status", "succeeded");
  await expect(card.locator(".edited-note")).toBeVisible();
  // The card says what ran, and what was proposed.
  await expect(card.locator(".summary")).toHaveText(
    "Refund $10.00 of $249.00 left on order 1001 · alice · Espresso machine (edited from: Refund $249.00 (everything left) on order 1001 · alice · Espresso machine)",
  );
  await expect(card.locator(".json-diff .diff-added")).toContainText('"amount": 10');
  const order = await (await page.request.get(`${server.url}/api/orders/1001`)).json();
  expect(order.refunded).toBe(10);
  await expect(page.locator(".bubble-assistant").last()).toContainText("edited the arguments");
});

test("HTML in a tool argument is shown as text, never run", async ({ page }) => {
  let dialogs = 0;
  page.on("dialog", async (d) => {
    dialogs++;
    await d.dismiss();
  });
  await newChat(page);
  const payload = "<img/src=x/onerror=window.__pwned=1><script>window.__pwned=2</script>";
  await say(page, `list orders of ${payload}`);
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "succeeded");
  await expect(card.locator("pre.json")).toContainText("<script>window.__pwned=2</script>");
  await page.reload();
  await expect(card.locator("pre.json")).toContainText("<img/src=x/onerror=window.__pwned=1>");
  expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
  expect(dialogs).toBe(0);
  await expect(page.locator("img[src=x]")).toHaveCount(0);
});

test("editing args as a form: a field per property, checked as you type, the change by key", async ({ page, server }) => {
  await newChat(page);
  await say(page, "refund order 1004");
  const card = cards(page).first();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  await card.getByRole("button", { name: "Edit" }).click();
  const orderId = card.getByLabel(/order_id/);
  const amount = card.getByLabel(/amount/);
  await expect(orderId).toHaveValue("1004");
  await expect(orderId).toHaveAttribute("type", "number");
  await expect(amount).toHaveValue("");
  await expect(card.locator(".key-changes")).toContainText("No changes yet.");

  // Checked as you type, the message next to the field; nothing is sent while a field is wrong.
  await amount.fill("0");
  await expect(card.locator("[id$=\"-amount-problem\"]")).toHaveText("Must be more than 0.");
  await card.getByRole("button", { name: "Approve with these changes" }).click();
  await expect(card.getByRole("alert").filter({ hasText: "Fix the field marked above first: nothing was sent." })).toBeVisible();
  await expect(card).toHaveAttribute("data-status", "pending_approval");
  // More than is left: said while editing, with the headline the edited call would have.
  await amount.fill("5000");
  await expect(card.locator(".edit-preview .preview-summary")).toHaveText("Refund $5,000.00 of $1,200.00 left on order 1004 · bob · Barista course");
  await expect(card.locator(".edit-preview .card-warnings")).toHaveText("$5,000.00 is more than the $1,200.00 left to refund: the call will fail");
  await orderId.fill("");
  await expect(card.locator("[id$=\"-order_id-problem\"]")).toHaveText("Required.");
  await orderId.fill("1004");
  await expect(card.locator("[id$=\"-order_id-problem\"]")).toHaveText("");
  await amount.fill("0.5");
  await expect(card.locator("[id$=\"-amount-problem\"]")).toHaveText("");
  await expect(card.locator(".key-changes li")).toHaveText(["amount: (none) → 0.5"]);
  await page.screenshot({ path: "screenshots/edit-form.png" });

  // The JSON view shows the same edit, and back.
  await card.getByRole("button", { name: "Edit as JSON" }).click();
  await expect(card.getByLabel("Arguments (JSON)")).toHaveValue(/"amount": 0.5/);
  await card.getByRole("button", { name: "Edit as a form" }).click();
  await expect(card.getByLabel(/amount/)).toHaveValue("0.5");

  await card.getByRole("button", { name: "Approve with these changes" }).click();
  await expect(card).toHaveAttribute("data-status", "succeeded");
  const order = await (await page.request.get(`${server.url}/api/orders/1004`)).json();
  expect(order.refunded).toBe(0.5);
});
