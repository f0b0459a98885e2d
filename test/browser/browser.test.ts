import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { projectRoot } from "../../harness/process.js";
import { ARTIFACTS, launchBrowser } from "../support/browser.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";

// One service and one browser for the file: the reference page, and the relay opened from a page.
let service: TestService;
let account: TestAccount;
let api: Api;
let browser: Awaited<ReturnType<typeof launchBrowser>>;

beforeAll(async () => {
  [service, browser] = await Promise.all([startTestService(), launchBrowser()]);
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

/** The web page: it holds the relay with the SDK's relay client and the browser's own WebSocket. */
const PAGE = `<!doctype html>
<title>agent console</title>
<script type="module">
  import { relay } from "/relay.js";
  const agentId = new URLSearchParams(location.search).get("agent_id");
  window.handed = [];
  // What the connection went through, with when (ms since the page started): a failure shows it.
  window.statuses = [["page", Math.round(performance.now())]];
  const connection = relay(agentId, { "*": (event) => window.handed.push(event) }, {
    onStatus: (status) => window.statuses.push([status, Math.round(performance.now())]),
    onError: (error) => window.statuses.push(["error: " + error.message, Math.round(performance.now())]),
    // Each connection gets a fresh ticket from this app's own server, which holds the key.
    url: async () => (await (await fetch("/ticket?agent_id=" + agentId)).json()).url,
    runtime: "browser",
  });
  connection.ready.then(() => (window.relayStatus = connection.status));
</script>`;

/**
 * A web app of its own origin, as a developer would build one: it serves the page, the SDK's
 * browser-ready modules (sdk/dist, built by `npm run build`), and a /ticket endpoint that gets a
 * relay ticket with its server-side key, so the page never sees the key.
 */
async function startWebApp(apiKey: string): Promise<{ url: string; close(): Promise<void> }> {
  const dist = join(projectRoot, "sdk", "dist");
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname === "/ticket") {
      const ticket = await fetch(`${service.baseUrl}/v1/events/ws/ticket`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ agent_id: url.searchParams.get("agent_id") }),
      });
      res.writeHead(ticket.status, { "content-type": "application/json" }).end(await ticket.text());
      return;
    }
    if (url.pathname === "/") return void res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
    const file = join(dist, url.pathname);
    if (!file.startsWith(dist) || !existsSync(file)) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "text/javascript" }).end(readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  // Closing ends Chromium's sockets too: a socket it opened ahead of a request is not idle to
  // Node, and would hold `close` until the headers timeout (60 s and more) ended it.
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close };
}

describe("in a browser (headless Chromium)", () => {
  it("renders the API reference at /docs from the service alone, listing every operation", { timeout: 180_000 }, async () => {
    const page = await browser.context.newPage();
    await page.goto(`${service.baseUrl}/`);
    expect(new URL(page.url()).pathname).toBe("/docs");
    await page.getByText("Health check", { exact: true }).first().waitFor({ timeout: 60_000 });
    // The sidebar lists each tag; opening one lists its operations. Every operation of the
    // service's own /openapi.json must be there, not a sample.
    const document = (await (await fetch(`${service.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { summary?: string; tags?: string[] }>>;
    };
    const listed = new Map<string, Set<string>>();
    for (const item of Object.values(document.paths)) {
      for (const operation of Object.values(item)) {
        if (!operation?.summary) continue;
        const tag = operation.tags?.[0] ?? "";
        listed.set(tag, (listed.get(tag) ?? new Set()).add(operation.summary));
      }
    }
    expect([...listed.values()].reduce((n, s) => n + s.size, 0)).toBeGreaterThan(60);
    for (const [tag, summaries] of listed) {
      const [first] = summaries;
      // A tag that is already open would close on a click.
      if (!(await page.getByText(first!, { exact: true }).first().isVisible())) await page.getByText(tag, { exact: true }).first().click();
      for (const summary of summaries) await page.getByText(summary, { exact: true }).first().waitFor({ timeout: 20_000 });
    }
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "docs.png"), fullPage: false });
    expect(browser.offMachine).toEqual([]);
    await page.close();
  });

  it("opens the relay with a ticket through the SDK and the browser's own WebSocket, and acknowledges what it gets", { timeout: 180_000 }, async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    const app = await startWebApp(account.apiKey);
    const page = await browser.context.newPage();
    try {
      // Chromium shares two cores with the suite's other worker: generous waits, as for /docs.
      const started = Date.now();
      await page.goto(`${app.url}/?agent_id=${agentId}`, { timeout: 60_000 });
      const loaded = Date.now() - started;
      // Page state is read through `globalThis` (the type-checker here knows no DOM). A wait that
      // fails says how far the page got, and when.
      const waitFor = (what: string, fn: () => boolean, timeout: number) =>
        page.waitForFunction(fn, undefined, { timeout }).catch(async (error: Error) => {
          const statuses = await page.evaluate(() => (globalThis as any).statuses).catch(() => "unreadable");
          throw new Error(`${what}: ${error.message}\npage loaded after ${loaded} ms; relay statuses (ms since the page started): ${JSON.stringify(statuses)}`);
        });
      await waitFor("the relay opens", () => (globalThis as any).relayStatus === "open", 60_000);
      await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550150", text: "to the browser" });
      await waitFor("the text reaches the page", () => (globalThis as any).handed.length === 1, 40_000);
      const [event] = (await page.evaluate(() => (globalThis as any).handed)) as Array<Record<string, unknown>>;
      expect(event).toMatchObject({ event_type: "sms.received", agent_id: agentId, payload: { text: "to the browser" } });
      // Acknowledged from the page: nothing is left pending.
      await expect.poll(async () => (await api.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data, { timeout: 10_000 }).toEqual([]);
      expect(browser.offMachine).toEqual([]);
    } finally {
      await page.close();
      await app.close();
    }
  });
});
