// Signing in through the organisation's identity provider (docs/sign-in.md): a real, certified
// OpenID provider (oidc-provider from npm, end2end/oidc/idp.mjs), its login page in Chromium.
import { spawn, ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";

import { BrowserContext, Page } from "@playwright/test";
import { Server, cards, expect, guarded as test, newChat, REFUNDS_GATE, say, waitForHydration } from "./fixtures";

/** The test provider, one per test (stopped when its stdin closes). */
async function startIdp(): Promise<{ issuer: string; proc: ChildProcess }> {
  const proc = spawn("node", [path.join(__dirname, "..", "oidc", "idp.mjs")], { stdio: ["pipe", "pipe", "ignore"] });
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the test identity provider did not start")), 20_000);
    createInterface({ input: proc.stdout! }).once("line", (l) => {
      clearTimeout(timer);
      resolve(l);
    });
  });
  return { issuer: JSON.parse(line).issuer, proc };
}

async function setUser(issuer: string, id: string, user: object): Promise<void> {
  const response = await fetch(`${issuer}/test/users/${id}`, { method: "PUT", body: JSON.stringify(user), headers: { "content-type": "application/json" } });
  expect(response.status).toBe(204);
}

function oidcConfig(issuer: string, extra = ""): string {
  return `${REFUNDS_GATE}approvers = ["group:finance"]

[[agents.gates]]
name = "cancellations"
kind = "tools"
tools = ["cancel_order"]
reauthenticate = true

[oidc]
name = "Test IdP"
issuer = "${issuer}"
client_id = "countersign"
client_secret_env = "COUNTERSIGN_TEST_OIDC_SECRET"
scopes = ["profile", "email", "groups"]
admin_groups = ["countersign-admins"]
group_prefix = "cs-"
${extra}
`;
}

/** Signs `context` in through the provider's page, starting from `start`. */
async function signIn(context: BrowserContext, server: Server, login: string, password: string, start = "/"): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${server.url}${start}`);
  await expect(page).toHaveURL(/\/login\?next=/);
  await waitForHydration(page);
  await page.getByRole("link", { name: "Sign in with Test IdP" }).click();
  await expect(page).toHaveTitle("Test IdP — sign in");
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(`${server.url}${start}`);
  await expect(page.locator(".whoami")).toContainText(login);
  return page;
}

test("people sign in through the identity provider, decide what its groups allow, and log out there", async ({ browser }) => {
  const idp = await startIdp();
  const server = new Server(oidcConfig(idp.issuer), { COUNTERSIGN_TEST_OIDC_SECRET: "test-secret" });
  const contexts: BrowserContext[] = [];
  const context = async () => {
    const c = await browser.newContext({ baseURL: server.url });
    contexts.push(c);
    return c;
  };
  try {
    await server.start();
    await setUser(idp.issuer, "carol", { password: "carol-pw", groups: ["staff"] });
    await setUser(idp.issuer, "dana", { password: "dana-pw", email: "dana@example.com", groups: ["cs-finance"] });
    await setUser(idp.issuer, "erin", { password: "erin-pw", groups: ["countersign-admins"] });

    // Carol (in no approver group) asks for a refund: only finance may decide it.
    const carol = await signIn(await context(), server, "carol", "carol-pw");
    await newChat(carol);
    await say(carol, "refund order 1001");
    const card = cards(carol).first();
    await expect(card).toHaveAttribute("data-status", "pending_approval");
    await expect(card.getByRole("button", { name: "Approve", exact: true })).toHaveCount(0);

    // Dana's provider group makes her one of finance from her first sign-in: she approves it.
    const dana = await signIn(await context(), server, "dana", "dana-pw", "/approvals");
    const row = dana.locator(".queue-item").first();
    await row.locator(".queue-row > summary").click();
    await row.getByRole("button", { name: "Approve", exact: true }).click();
    await expect(card).toHaveAttribute("data-status", "succeeded");
    await expect(card.locator(".decision")).toHaveText("Approved by dana");

    // A gate that asks for a fresh sign-in says so on its card and offers one: the provider asks
    // for the password again although it remembers carol, and the browser comes back here.
    await say(carol, "cancel order 1003");
    const cancel = cards(carol).nth(1);
    await expect(cancel).toHaveAttribute("data-status", "pending_approval");
    await expect(cancel.locator(".fresh-sign-in")).toContainText("This gate asks for a sign-in within the last 5 minutes.");
    const chat = carol.url();
    await cancel.getByRole("link", { name: "Sign in again" }).click();
    await expect(carol).toHaveTitle("Test IdP — sign in");
    await carol.locator('input[name="login"]').fill("carol");
    await carol.locator('input[name="password"]').fill("carol-pw");
    await carol.getByRole("button", { name: "Sign in" }).click();
    await expect(carol).toHaveURL(chat);
    await waitForHydration(carol);
    await cards(carol).nth(1).getByRole("button", { name: "Approve", exact: true }).click();
    await expect(cards(carol).nth(1)).toHaveAttribute("data-status", "succeeded");

    // Erin is an admin by her provider group; the provider's group is listed read-only.
    const erin = await signIn(await context(), server, "erin", "erin-pw");
    await expect(erin.locator(".whoami")).toContainText("(admin)");
    await erin.goto(`${server.url}/groups`);
    await waitForHydration(erin);
    const finance = erin.locator('.group[data-group="finance"]');
    await expect(finance.locator(".members")).toHaveText("dana");
    await expect(finance).toContainText("From the identity provider: change it there.");
    await expect(finance.getByRole("button", { name: "Save members" })).toHaveCount(0);
    await erin.screenshot({ path: "screenshots/sign-in-groups.png" });

    // Log out: the session ends here and at the provider, and the login page says so.
    await dana.getByRole("button", { name: "Log out" }).click();
    await expect(dana).toHaveURL(`${server.url}/login?signed_out=1`);
    await expect(dana.getByRole("status")).toHaveText("You are signed out.");
    await dana.goto(`${server.url}/approvals`);
    await expect(dana).toHaveURL(/\/login\?next=/);
    // The provider forgot her too: signing in asks for her password again.
    await waitForHydration(dana);
    await dana.getByRole("link", { name: "Sign in with Test IdP" }).click();
    await expect(dana).toHaveTitle("Test IdP — sign in");
  } finally {
    for (const c of contexts) await c.close();
    await server.stop();
    server.cleanup();
    idp.proc.kill();
  }
});

test("with passwords off the login page offers the provider, and a provider that is down gets a clear message", async ({ page }) => {
  // A port nothing listens on.
  const down = "http://127.0.0.1:9";
  const server = new Server(oidcConfig(down, "password_login = false"), { COUNTERSIGN_TEST_OIDC_SECRET: "test-secret" });
  try {
    server.addUser("root", true);
    await server.start();
    await page.goto(`${server.url}/login`);
    await waitForHydration(page);
    await expect(page.getByRole("link", { name: "Sign in with Test IdP" })).toBeVisible();
    // The password form is folded away for a break-glass admin.
    await expect(page.getByLabel("Password")).toBeHidden();
    await page.screenshot({ path: "screenshots/sign-in.png" });
    await page.getByRole("link", { name: "Sign in with Test IdP" }).click();
    await expect(page).toHaveURL(`${server.url}/login?sign_in_error=unreachable`);
    await expect(page.getByRole("alert")).toHaveText(
      "The identity provider could not be reached. Try again in a moment; if it stays so, tell an admin.",
    );
    // The break-glass admin still gets in with a password.
    await waitForHydration(page);
    await page.getByText("Administrator sign-in (break-glass)").click();
    await page.getByLabel("User name").fill("root");
    await page.getByLabel("Password").fill("e2e-password-1");
    await page.getByRole("button", { name: "Log in" }).click();
    await expect(page.locator(".whoami")).toContainText("root");
  } finally {
    await server.stop();
    server.cleanup();
  }
});
