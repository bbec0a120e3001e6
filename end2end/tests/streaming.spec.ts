import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "@playwright/test";
import { Server, logIn, say, waitForHydration, guarded as base } from "./fixtures";

// An OpenAI-compatible model that writes its reply in three pieces, 600 ms apart, so the
// browser can be seen showing the reply while it is being written.
async function slowModel(): Promise<{ url: string; close: () => void }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", async () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const piece of ["Streaming ", "reply ", "arrives."]) {
        const chunk = { choices: [{ index: 0, delta: { content: piece } }] };
        res.write(`data: ${JSON.stringify(chunk)}\n\n`);
        await new Promise((r) => setTimeout(r, 600));
      }
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, close: () => server.close() };
}

base("a streamed reply shows as a live draft that the stored reply replaces", async ({ page }) => {
  const model = await slowModel();
  const server = new Server(
    `[[agents]]\nname = "writer"\n[agents.model]\nprovider = "openai"\nbase_url = "${model.url}"\nmodel = "slow"\nmax_retries = 0\n`,
  );
  server.addUser("alice");
  await server.start();
  try {
    await logIn(page.context(), server, "alice");
    await page.goto(server.url);
    await waitForHydration(page);
    await page.getByRole("button", { name: "New chat" }).click();
    await expect(page).toHaveURL(/\/c\/[0-9a-f-]+$/);
    await waitForHydration(page);
    await say(page, "write something");
    const draft = page.locator(".bubble-draft");
    await expect(draft).toContainText("Streaming");
    await expect(draft).toHaveAttribute("aria-busy", "true");
    await expect(page.locator(".bubble-assistant").last()).toHaveText("Streaming reply arrives.");
    await expect(draft).toHaveCount(0);
    await page.reload();
    await expect(page.locator(".bubble-assistant")).toHaveText(["Streaming reply arrives."]);
  } finally {
    await server.stop(); // with the page's event stream still open: stops after a short grace period
    server.cleanup();
    model.close();
  }
});
