// A Countersign server per test: the real binary, a fresh SQLite file in a temporary
// directory, a free port chosen by the OS. Stopped (and its data removed) when the worker ends.
import { test as playwrightTest, expect, APIRequestContext, Browser, BrowserContext, Locator, Page } from "@playwright/test";
import AxeBuilder from "@axe-core/playwright";
import { spawn, spawnSync, ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** The support agent with one gate, on refunds (tests append that gate's own settings). */
export const REFUNDS_GATE = `
[[agents]]
name = "support"
tools = ["list_orders", "get_order", "cancel_order", "process_refund"]

[[agents.gates]]
name = "refunds"
kind = "tools"
tools = ["process_refund"]
`;

/** Password of every test user. */
export const PASSWORD = "e2e-password-1";

function binary(): string {
  const bin = process.env.COUNTERSIGN_BIN;
  if (!bin) throw new Error("COUNTERSIGN_BIN must be set (run `./x test`)");
  return bin;
}

export class Server {
  url = "";
  private proc?: ChildProcess;
  readonly dataDir = mkdtempSync(path.join(tmpdir(), "countersign-e2e-"));
  private agents?: string;

  /**
   * With `agentsToml`, the server uses that agent configuration instead of the demo one; `env`
   * sets more of its variables (e.g. `COUNTERSIGN_PAGE_ITEMS`).
   */
  constructor(agentsToml?: string, private readonly env: Record<string, string> = {}) {
    if (agentsToml) {
      this.agents = path.join(this.dataDir, "agents.toml");
      writeFileSync(this.agents, agentsToml);
    }
  }

  /** Creates a user with the CLI (`countersign user add`), password on stdin. */
  addUser(name: string, admin = false): void {
    const args = ["user", "add", name, ...(admin ? ["--admin"] : [])];
    const result = spawnSync(binary(), args, { input: `${PASSWORD}\n`, env: { ...process.env, COUNTERSIGN_DATA_DIR: this.dataDir } });
    if (result.status !== 0) throw new Error(`user add ${name}: ${result.stderr}`);
  }

  /** Starts the binary; with `port` it reuses a previous port (a restart the page can reconnect to). */
  async start(port = 0): Promise<void> {
    const bin = binary();
    const siteRoot = process.env.COUNTERSIGN_SITE_ROOT;
    if (!siteRoot) throw new Error("COUNTERSIGN_SITE_ROOT must be set (run `./x test`)");
    const proc = spawn(bin, [], {
      env: {
        ...process.env,
        COUNTERSIGN_ADDR: `127.0.0.1:${port}`,
        COUNTERSIGN_DATA_DIR: this.dataDir,
        COUNTERSIGN_SITE_ROOT: siteRoot,
        ...(this.agents ? { COUNTERSIGN_AGENTS: this.agents } : {}),
        ...this.env,
        RUST_LOG: process.env.E2E_SERVER_LOG ?? "warn",
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    this.proc = proc;
    this.url = await new Promise<string>((resolve, reject) => {
      let seen = "";
      const timer = setTimeout(() => reject(new Error(`server did not start: ${seen}`)), 30_000);
      proc.stdout!.on("data", (chunk: Buffer) => {
        seen += chunk.toString();
        const match = seen.match(/listening on (http:\/\/\S+)/);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      proc.on("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`server exited with ${code}: ${seen}`));
      });
    });
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once("exit", resolve));
    proc.kill(signal);
    await exited;
  }

  async restart(): Promise<void> {
    const port = this.port;
    await this.stop("SIGKILL");
    await this.start(port);
  }

  cleanup(): void {
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** Logs a browser context in through the JSON API; its pages share the session cookie. */
/** Starts a chat as the API caller `api` with `text`, and waits until `total` approvals wait
 * (all the caller may see); the chat's id. */
export async function chatWaiting(api: APIRequestContext, server: Server, text: string, total: number): Promise<string> {
  const conversation = await (await api.post(`${server.url}/api/conversations`, { data: {} })).json();
  expect((await api.post(`${server.url}/api/conversations/${conversation.id}/messages`, { data: { text } })).ok()).toBe(true);
  await expect.poll(async () => (await (await api.get(`${server.url}/api/approvals`)).json()).length).toBe(total);
  return conversation.id;
}

export async function logIn(context: BrowserContext, server: Server, username: string): Promise<void> {
  const response = await context.request.post(`${server.url}/api/session`, { data: { username, password: PASSWORD } });
  if (!response.ok()) throw new Error(`login ${username}: ${response.status()}`);
}

// What a browser may print in a test that expects it (a refused request shows as a console
// error "Failed to load resource: … 403"): the test calls `allowConsole(/…/)` first.
let allowed: RegExp[] = [];

// The browser's own report of a server going away under an open stream (a restart, or the end
// of a test that stops its server itself). The page handles it: it reconnects (live.spec.ts).
const SERVER_GONE = /Failed to load resource: net::ERR_(INCOMPLETE_CHUNKED_ENCODING|CONNECTION_REFUSED|CONNECTION_RESET)/;

/** Lets the running test's pages print console messages matching `pattern` (an expected refusal). */
export function allowConsole(pattern: RegExp): void {
  allowed.push(pattern);
}

// WCAG 2.2 AA, as axe-core checks it: run on every page state a test waits for (each
// `waitForHydration`) and on every page still open when the test ends.
const WCAG = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"];
let accessibility: string[] = [];
const watchedContexts: BrowserContext[] = [];

/** Runs axe-core on the page as it is now; violations are reported when the test ends. */
export async function checkAccessibility(page: Page, atEnd = false): Promise<void> {
  if (page.isClosed() || page.url().startsWith("about:")) return;
  // A test may leave a long card half under the sticky composer (its last scroll): the end state
  // is checked at the bottom of the page, where the composer covers nothing.
  if (atEnd) await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  const analyze = () => new AxeBuilder({ page }).withTags(WCAG).analyze();
  // A page that is navigating (a login's redirect) is checked once it has loaded.
  let results;
  for (let attempt = 1; ; attempt++) {
    try {
      results = await analyze();
      break;
    } catch (err) {
      if (attempt === 3 || !/Execution context was destroyed|navigat/.test((err as Error).message)) throw err;
      await page.waitForLoadState("load");
    }
  }
  for (const v of results.violations) {
    const where = v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ");
    accessibility.push(`${new URL(page.url()).pathname}: ${v.id} (${v.help}) at ${where}`);
  }
}

/** Sends every console error and warning and every page error of `context` to `problems`. */
function watchConsole(context: BrowserContext, problems: string[]): void {
  context.on("console", (msg) => {
    if (msg.type() === "error" || msg.type() === "warning") problems.push(`console.${msg.type()}: ${msg.text()}`);
  });
  context.on("weberror", (err) => problems.push(`page error: ${err.error().message}`));
}

// Every test fails on a browser console error or warning, a page error or a WASM panic (which
// the panic hook prints as a console error), a Leptos warning included: in the default context
// and in every context the test opens itself.
export const guarded = playwrightTest.extend<{ consoleGuard: void }>({
  consoleGuard: [
    async ({ browser, context }, use) => {
      allowed = [];
      accessibility = [];
      watchedContexts.length = 0;
      const problems: string[] = [];
      watchConsole(context, problems);
      watchedContexts.push(context);
      const newContext = browser.newContext.bind(browser);
      (browser as Browser).newContext = async (...args: Parameters<Browser["newContext"]>) => {
        const created = await newContext(...args);
        watchConsole(created, problems);
        watchedContexts.push(created);
        return created;
      };
      await use();
      (browser as Browser).newContext = newContext;
      for (const open of watchedContexts.flatMap((c) => c.pages())) {
        await checkAccessibility(open, true).catch(() => {});
      }
      const unexpected = problems.filter((p) => !SERVER_GONE.test(p) && !allowed.some((re) => re.test(p)));
      expect(unexpected, "browser console errors, warnings or page errors").toEqual([]);
      expect([...new Set(accessibility)], "WCAG 2.2 AA violations (axe-core)").toEqual([]);
    },
    { auto: true },
  ],
});
const base = guarded;

// A fresh server and database per test (users alice and bob, admin root), running the agent
// configuration `agentsToml` (the built-in demo one when not given) and the variables `env`;
// `page` is logged in as alice.
export function testWithAgents(agentsToml?: string, env: Record<string, string> = {}) {
  return base.extend<{ server: Server }>({
    server: async ({}, use) => {
      const server = new Server(agentsToml, env);
      server.addUser("alice");
      server.addUser("bob");
      server.addUser("root", true);
      await server.start();
      await use(server);
      await server.stop();
      server.cleanup();
    },
    baseURL: async ({ server }, use) => use(server.url),
    page: async ({ page, server }, use) => {
      await logIn(page.context(), server, "alice");
      await use(page);
    },
  });
}

export const test = testWithAgents();

/** Waits until the WASM client has hydrated the server-rendered page. */
export async function waitForHydration(page: import("@playwright/test").Page): Promise<void> {
  await expect(page.locator("#hydration-marker")).toHaveAttribute("data-hydrated", "true");
  await checkAccessibility(page);
}

export { expect };

/** Opens a new chat from the home page, with `agent` when given (else the default agent). */
export async function newChat(page: import("@playwright/test").Page, agent?: string): Promise<void> {
  await page.goto("/");
  await waitForHydration(page);
  if (agent) {
    const choice = page.getByLabel("New chat with");
    await expect(choice.locator("option")).not.toHaveCount(0);
    await choice.selectOption(agent);
  }
  await page.getByRole("button", { name: "New chat" }).click();
  await expect(page).toHaveURL(/\/c\/[0-9a-f-]+$/);
  await waitForHydration(page);
  await expect(page.locator("#composer-input")).toBeEnabled();
}

/** Sends a message through the composer. */
export async function say(page: import("@playwright/test").Page, text: string): Promise<void> {
  await page.locator("#composer-input").fill(text);
  await page.getByRole("button", { name: "Send" }).click();
}

export function cards(page: import("@playwright/test").Page) {
  return page.locator(".tool-card");
}

/** Counts every card taken off the page from now on (a thread drawn again removes them all). */
export async function watchCards(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { cardsRemoved: number };
    w.cardsRemoved = 0;
    new MutationObserver((changes) => {
      for (const change of changes)
        for (const node of Array.from(change.removedNodes))
          if (node instanceof Element && (node.matches(".tool-card") || node.querySelector(".tool-card"))) w.cardsRemoved++;
    }).observe(document.body, { childList: true, subtree: true });
  });
}

export async function cardsRemoved(page: Page): Promise<number> {
  return page.evaluate(() => (window as unknown as { cardsRemoved: number }).cardsRemoved);
}

/** Types `keys` one by one into the focused `field`, whose value starts as `start`: after each
 * key the field keeps the focus, shows what was typed, stays where it was on the page (nothing
 * above it grows, shrinks or is drawn again) and the page does not jump to the top. */
export async function typeKeyByKey(page: Page, field: Locator, start: string, keys: string): Promise<void> {
  await expect(field).toBeFocused();
  const top = () => field.evaluate((el) => Math.round(el.getBoundingClientRect().top + window.scrollY));
  const before = await top();
  const scrolled = (await page.evaluate(() => window.scrollY)) > 0;
  for (let i = 0; i < keys.length; i++) {
    await page.keyboard.type(keys[i]);
    const typed = start + keys.slice(0, i + 1);
    const now = await field.evaluate((el) => ({ focused: document.activeElement === el, value: (el as HTMLInputElement).value }));
    expect(now, `after typing ${JSON.stringify(keys.slice(0, i + 1))}`).toEqual({ focused: true, value: typed });
    expect(Math.abs((await top()) - before), "the field stays where it was on the page").toBeLessThanOrEqual(1);
    if (scrolled) expect(await page.evaluate(() => window.scrollY), "the page did not jump to the top").toBeGreaterThan(0);
  }
  // A late redraw would show here too.
  await expect(field).toHaveValue(start + keys);
  await expect(field).toBeFocused();
}
