// Every page works under the Content-Security-Policy (no inline script without the response's
// nonce, no eval), and no other site can frame the app.
import { test, expect, logIn, newChat, say, cards, waitForHydration, allowConsole } from "./fixtures";
import type { Page } from "@playwright/test";

/** Records CSP violations the page reports (the browser also logs them as console errors). */
async function watchCsp(page: Page): Promise<() => Promise<string[]>> {
  await page.addInitScript(() => {
    (window as any).__csp = [];
    document.addEventListener("securitypolicyviolation", (e) => (window as any).__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  return () => page.evaluate(() => (window as any).__csp as string[]);
}

test("every page hydrates and works under the CSP without a single violation", async ({ page, browser, server }) => {
  // The unknown page /nowhere.
  allowConsole(/status of 404/);
  const violations = await watchCsp(page);

  const response = await page.goto("/");
  const headers = response!.headers();
  const nonce = headers["content-security-policy"].match(/'nonce-([^']+)'/)![1];
  expect(headers["content-security-policy"]).toContain("frame-ancestors 'none'");
  expect(headers["x-frame-options"]).toBe("DENY");
  expect(headers["x-content-type-options"]).toBe("nosniff");
  expect(headers["referrer-policy"]).toBe("same-origin");
  // The hydration script carries this response's nonce (and no inline script lacks it).
  const inline = await page.locator("script:not([src])").evaluateAll((scripts) => scripts.map((s) => (s as HTMLScriptElement).nonce));
  expect(inline.length).toBeGreaterThan(0);
  expect(inline.every((n) => n === nonce)).toBe(true);
  await waitForHydration(page);

  // A chat with live updates and a decision (fetch + SSE under connect-src 'self').
  await newChat(page);
  const chat = page.url();
  await say(page, "refund order 1002");
  const card = cards(page).first();
  await card.getByRole("button", { name: "Approve", exact: true }).click();
  await expect(card).toHaveAttribute("data-status", "succeeded");
  expect(await violations()).toEqual([]);

  for (const path of ["/approvals", "/nowhere"]) {
    await page.goto(path);
    await waitForHydration(page);
    expect(await violations(), path).toEqual([]);
  }

  const adminContext = await browser.newContext();
  await logIn(adminContext, server, "root");
  const admin = await adminContext.newPage();
  const adminViolations = await watchCsp(admin);
  for (const path of ["/audit", "/approvals", "/groups", "/policy"]) {
    await admin.goto(`${server.url}${path}`);
    await waitForHydration(admin);
    expect(await adminViolations(), path).toEqual([]);
  }

  const anonymous = await (await browser.newContext()).newPage();
  const anonymousViolations = await watchCsp(anonymous);
  await anonymous.goto(`${server.url}/login`);
  await waitForHydration(anonymous);
  expect(await anonymousViolations()).toEqual([]);

  // The signed-link pages (no session): the confirmation page and its answer.
  await page.goto(chat);
  await waitForHydration(page);
  await say(page, "refund order 1001");
  await expect(cards(page).nth(1)).toHaveAttribute("data-status", "pending_approval");
  const pending = await (await page.context().request.get(`${server.url}/api/approvals?status=pending`)).json();
  const issued = await page.context().request.post(`${server.url}/api/approvals/${pending[0].id}/links`, { data: {} });
  const { reject_url } = await issued.json();
  await anonymous.goto(reject_url);
  await expect(anonymous.getByRole("heading", { name: "Reject this call?" })).toBeVisible();
  await anonymous.getByRole("button", { name: "Reject" }).click();
  await expect(anonymous.getByRole("heading", { name: "Rejected" })).toBeVisible();
  expect(await anonymousViolations()).toEqual([]);

});

test("another site cannot frame the approval queue", async ({ page, server }) => {
  // Control: the same page, framed by itself, would show the app (its login page at least).
  const direct = await page.request.get(`${server.url}/approvals`);
  expect(direct.headers()["x-frame-options"]).toBe("DENY");
  // Attack: a page elsewhere frames the queue to trick a click (the `a` key approves). The
  // document's load event waits for the frame, whatever it shows.
  await page.goto("about:blank");
  await page.setContent(`<iframe id="victim" src="${server.url}/approvals" width="800" height="600"></iframe>`, { waitUntil: "load" });
  const frame = page.frameLocator("#victim");
  await expect(frame.locator("#hydration-marker")).toHaveCount(0);
  await expect(frame.locator(".top-bar, .login")).toHaveCount(0);
  const framed = page.frames().find((f) => f !== page.mainFrame());
  expect(framed?.url()).not.toBe(`${server.url}/approvals`);
});
