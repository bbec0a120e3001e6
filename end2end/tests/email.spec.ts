import { expect } from "@playwright/test";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { say, cards, newChat, testWithAgents, REFUNDS_GATE } from "./fixtures";

// A real SMTP server (Python's aiosmtpd, which the test command installs) on a port chosen here.
const SMTP_PORT = 20000 + Math.floor(Math.random() * 20000);

const AGENTS = `
[[groups]]
name = "finance"
members = ["bob"]
${REFUNDS_GATE}approvers = ["group:finance"]
notify = ["email"]
`;

/** Undoes quoted-printable: soft line breaks and =XX bytes. */
function quotedPrintable(raw: string): string {
  const joined = raw.replace(/=\r?\n/g, "");
  return Buffer.from(joined.replace(/=([0-9A-F]{2})/g, (_, hex) => String.fromCharCode(parseInt(hex, 16))), "latin1").toString("utf8");
}

testWithAgents(AGENTS, { COUNTERSIGN_SMTP_URL: `smtp://127.0.0.1:${SMTP_PORT}` })(
  "an approver's email links to a page that decides the call in Chromium without logging in",
  async ({ page, browser, server }) => {
    const python = process.env.COUNTERSIGN_TEST_PYTHON;
    if (!python) throw new Error("COUNTERSIGN_TEST_PYTHON must name a Python with aiosmtpd (run `./x test`)");
    const maildir = mkdtempSync(path.join(tmpdir(), "countersign-mail-"));
    for (const sub of ["tmp", "new", "cur"]) mkdirSync(path.join(maildir, sub));
    const smtpd = spawn(python, ["-m", "aiosmtpd", "-n", "-l", `127.0.0.1:${SMTP_PORT}`, "-c", "aiosmtpd.handlers.Mailbox", maildir], { stdio: "inherit" });
    const bob = await browser.newContext({ baseURL: server.url });
    try {
      const set = spawnSync(process.env.COUNTERSIGN_BIN!, ["user", "email", "bob", "bob@example.com"], {
        env: { ...process.env, COUNTERSIGN_DATA_DIR: server.dataDir },
      });
      expect(set.status, String(set.stderr)).toBe(0);

      await newChat(page);
      await say(page, "refund order 1001");
      const card = cards(page).first();
      await expect(card).toHaveAttribute("data-status", "pending_approval");

      // The message bob receives (sent again within a second if the SMTP server was still starting).
      const message = await expect
        .poll(() => readdirSync(path.join(maildir, "new")).length, { timeout: 15_000 })
        .toBe(1)
        .then(() => quotedPrintable(readFileSync(path.join(maildir, "new", readdirSync(path.join(maildir, "new"))[0]), "utf8")));
      expect(message).toContain("To: bob <bob@example.com>");
      expect(message).toContain("Refund $249.00");
      const approve = message.match(/^Approve: (\S+)$/m)![1];

      const link = await bob.newPage();
      await link.goto(approve);
      await expect(link.getByRole("heading", { name: "Approve this call?" })).toBeVisible();
      await expect(link.getByText("You decide as bob.")).toBeVisible();
      await link.getByRole("button", { name: "Approve" }).click();
      await expect(link.getByRole("heading", { name: "Approved" })).toBeVisible();
      await expect(card).toHaveAttribute("data-status", "succeeded");
    } finally {
      await bob.close();
      smtpd.kill();
      rmSync(maildir, { recursive: true, force: true });
    }
  },
);
