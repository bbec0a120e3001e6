// The Policy page (/policy, admins): the configuration in force, rendered by the server, and a
// draft replayed against the calls recorded — the summary, the charts, the example calls, each
// linking to its chat — then the steps to roll a draft out. Someone who is not an admin is told
// only that the page is for admins, and nothing is asked of the server for them.
import { expect } from "@playwright/test";
import { cards, logIn, newChat, say, testWithAgents, typeKeyByKey, waitForHydration, REFUNDS_GATE } from "./fixtures";

const test = testWithAgents(REFUNDS_GATE);

// The draft adds a gate that asks before lookups. A person pastes most of it (one input event, as
// a paste is: `insertText`) and types its last line key by key; typing all of it would only be
// slower, and `fill` would hide what a person meets.
const PASTED = `${REFUNDS_GATE}
[[agents.gates]]
name = "lookups"
kind = "tools"
`;
const TYPED = `tools = ["get_order"]`;

test("an admin replays a draft that adds a gate: the summary, the charts, and an example that opens its chat", async ({ browser, server }) => {
  const root = await browser.newContext({ baseURL: server.url });
  try {
    await logIn(root, server, "root");
    const admin = await root.newPage();
    // Two calls recorded in one chat: a lookup nobody is asked about, a refund root approves.
    await newChat(admin);
    const chat = new URL(admin.url()).pathname;
    await say(admin, "look up order 1001");
    await expect(cards(admin)).toHaveCount(1);
    await expect(cards(admin).first()).toHaveAttribute("data-status", "succeeded");
    await expect(admin.locator("#composer-input")).toBeEnabled();
    await say(admin, "refund order 1001");
    const refund = cards(admin).nth(1);
    await expect(refund).toHaveAttribute("data-status", "pending_approval");
    await refund.getByRole("button", { name: "Approve", exact: true }).click();
    await expect(refund).not.toHaveAttribute("data-status", "pending_approval");

    // The top bar leads admins to the page; the server renders the configuration in force.
    await expect(admin.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Policy" })).toHaveAttribute("href", "/policy");
    await admin.goto("/policy");
    await waitForHydration(admin);
    await expect(admin.getByRole("heading", { name: "Policy", level: 1 })).toBeVisible();
    const live = admin.locator(".policy-live");
    await expect(live).toContainText("agents.toml");
    await live.getByText("Its text").click();
    await expect(live.locator("pre")).toContainText('name = "refunds"');
    await expect(admin.getByRole("heading", { name: "What the draft would have changed" })).toHaveCount(0);

    // The draft, pasted then finished by hand; Tab through the window and the agent to Replay.
    const draft = admin.getByLabel("Draft policy (TOML)");
    await draft.click();
    await admin.keyboard.insertText(PASTED);
    await expect(draft).toHaveValue(PASTED);
    await expect(draft).toBeFocused();
    await typeKeyByKey(admin, draft, PASTED, TYPED);
    await admin.keyboard.press("Tab");
    const days = admin.getByLabel("Window");
    await expect(days).toBeFocused();
    await expect(days).toHaveValue("30");
    await admin.keyboard.press("Tab");
    await expect(admin.getByLabel("Agent")).toBeFocused();
    await expect(admin.getByLabel("Agent")).toHaveValue("");
    await admin.keyboard.press("Tab");
    const replay = admin.locator("form.replay-form button[type=submit]");
    await expect(replay).toHaveText("Replay");
    await expect(replay).toBeFocused();
    await admin.keyboard.press("Enter");

    // The report arrives and takes the focus; the button is back, ready for another draft.
    const results = admin.getByRole("heading", { name: "What the draft would have changed" });
    await expect(results).toBeFocused();
    await expect(replay).toHaveText("Replay");
    await expect(replay).toBeEnabled();
    const stat = (key: string) => admin.locator(`.replay-summary [data-stat="${key}"] dd`);
    await expect(stat("calls")).toHaveText("2");
    await expect(stat("asked_recorded")).toHaveText("1");
    await expect(stat("asked_draft")).toHaveText("2");
    await expect(stat("new_friction")).toHaveText("1");
    await expect(stat("now_unasked")).toHaveText("0");

    // Stops per gate: each gate's numbers written beside its bars, live then draft.
    const gates = admin.getByRole("table", { name: /^Stops per gate/ });
    await expect(gates.getByRole("row", { name: /^lookups/ }).getByRole("cell")).toHaveText(["0", "1", ""]);
    await expect(gates.getByRole("row", { name: /^refunds/ }).getByRole("cell")).toHaveText(["1", "1", ""]);
    await expect(gates.locator("svg rect.bar-draft")).toHaveCount(2);
    await expect(admin.getByRole("img", { name: /^Calls asked about per day/ })).toBeVisible();
    await expect(admin.getByRole("table", { name: /^Deciders' load/ })).toBeVisible();
    await admin.locator("section.replay-results").screenshot({ path: "screenshots/policy.png" });

    // The new friction: the lookup, which opens the chat it was made in.
    const friction = admin.locator(".replay-examples").filter({ has: admin.getByRole("heading", { name: /^New friction/ }) });
    await expect(friction.getByRole("heading")).toHaveText("New friction: ran without asking, would now be stopped (1 call)");
    await expect(friction.locator("tbody tr")).toHaveCount(1);
    await expect(friction.locator("tbody tr")).toContainText('get_order {"order_id":1001}');
    await expect(friction.locator("tbody tr")).toContainText("asked under lookups (anyone)");

    // How to roll it out, at the end of the page.
    const rollout = admin.locator("section.rollout");
    await expect(rollout.getByRole("heading", { name: "Rolling a draft out" })).toBeVisible();
    await expect(rollout.locator(".rollout-steps > li")).toHaveCount(3);
    await expect(rollout).toContainText('mode = "shadow"');

    await friction.getByRole("link", { name: "Open the chat" }).click();
    await expect(admin).toHaveURL(new RegExp(`${chat}$`));
    await expect(cards(admin)).toHaveCount(2);
    await expect(cards(admin).first()).toHaveAttribute("data-status", "succeeded");
  } finally {
    await root.close();
  }
});

test("someone who is not an admin sees only that the policy is for admins", async ({ page }) => {
  // Alice: no Policy link, no configuration, no form; and no request the server refuses (a 403
  // in the console would fail the test).
  await page.goto("/policy");
  await waitForHydration(page);
  const policy = page.locator("section.policy");
  await expect(policy.locator(".not-admin")).toHaveText("Only admins may see the policy and replay drafts of it.");
  await expect(policy.locator("form")).toHaveCount(0);
  await expect(policy.locator("pre")).toHaveCount(0);
  await expect(page.getByLabel("Draft policy (TOML)")).toHaveCount(0);
  await expect(policy.getByText("only admins may do this")).toHaveCount(0);
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Policy" })).toHaveCount(0);
});
