import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { CallToolRequest } from "@modelcontextprotocol/sdk/types.js";
import { build } from "esbuild";
import type { Frame, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { projectRoot } from "../../harness/process.js";
import { launchBrowser } from "../support/browser.js";
import { httpMcp, type McpSession } from "../support/mcp.js";
import { startTestService, type TestService } from "../support/service.js";

// The live call view in a real browser (DESIGN §9c): a minimal MCP Apps host, ext-apps' AppBridge
// in a page, renders ui://agentline/call.html in a sandboxed iframe and forwards the view's tool
// calls to the service's /mcp through the MCP SDK's Client in this process. The view has no
// network of its own: it asks the host for everything.
let service: TestService;
let mcp: McpSession;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let host: { url: string; close(): Promise<void> };

/**
 * The host page: AppBridge without an MCP client of its own; `hostCallTool` (exposed by the test)
 * carries each tools/call to the service. `showView` mounts the view as a host does after a tool
 * call: the bridge connects to the iframe, the document goes in, then the tool's input and result.
 */
const HOST_SCRIPT = `
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
window.calledTools = [];
window.showView = async (html, input, result) => {
  const iframe = document.createElement("iframe");
  // An opaque origin, scripts only: the view shares nothing with this page but postMessage.
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.style.cssText = "width: 600px; height: 400px";
  document.body.append(iframe);
  const hostContext = { theme: "dark", styles: { variables: { "--color-text-primary": "rgb(1, 2, 3)" } } };
  const bridge = new AppBridge(null, { name: "test-host", version: "1.0.0" }, { serverTools: {} }, { hostContext });
  bridge.oncalltool = async (params) => {
    window.calledTools.push(params.name);
    return window.hostCallTool(params);
  };
  const initialized = new Promise((resolve) => (bridge.oninitialized = resolve));
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = html;
  await initialized;
  await bridge.sendToolInput({ arguments: input });
  await bridge.sendToolResult(result);
};
`;

/** Serves the host page with its script (AppBridge bundled by esbuild, as an app host ships it). */
async function startHost(): Promise<{ url: string; close(): Promise<void> }> {
  const bundled = await build({
    stdin: { contents: HOST_SCRIPT, resolveDir: projectRoot, loader: "js" },
    bundle: true,
    write: false,
    format: "esm",
    platform: "browser",
    target: "es2022",
    logLevel: "warning",
  });
  const script = bundled.outputFiles[0]!.text;
  const server: Server = createServer((req, res) => {
    if (req.url === "/host.js") return void res.writeHead(200, { "content-type": "text/javascript" }).end(script);
    if (req.url === "/")
      return void res.writeHead(200, { "content-type": "text/html" }).end('<!doctype html><title>host</title><script type="module" src="/host.js"></script>');
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

beforeAll(async () => {
  // A long turn timeout: no automatic filler line between the lines this test says.
  [service, browser, host] = await Promise.all([startTestService({ env: { TURN_TIMEOUT_MS: "60000" } }), launchBrowser(), startHost()]);
  mcp = await httpMcp(service.baseUrl, (await createAccount(service.core)).apiKey);
});
afterAll(async () => {
  await mcp?.close();
  await browser?.close();
  await host?.close();
  await service?.stop();
});

/** The transcript the view shows, as [who, text] pairs. */
async function shownLines(view: Frame): Promise<string[][]> {
  return view.locator("#lines li").evaluateAll((items) => items.map((li) => [li.className, (li.textContent ?? "").trim()]));
}

async function waitForLines(view: Frame, count: number): Promise<string[][]> {
  await view
    .locator("#lines li")
    .nth(count - 1)
    .waitFor({ timeout: 15_000 });
  return shownLines(view);
}

async function openHost(): Promise<{ page: Page; viewRequests: string[] }> {
  const page = await browser.context.newPage();
  // Every request a frame other than the host page makes: the view must make none.
  const viewRequests: string[] = [];
  page.on("request", (request) => {
    if (request.frame() !== page.mainFrame()) viewRequests.push(request.url());
  });
  await page.exposeFunction("hostCallTool", (params: CallToolRequest["params"]) => mcp.client.callTool(params));
  await page.goto(host.url);
  await page.waitForFunction(() => typeof (globalThis as any).showView === "function");
  return { page, viewRequests };
}

describe("the live call view in a host (Chromium, ext-apps AppBridge)", () => {
  it("shows a sandbox call's lines as they are said, and its hang-up button ends the call at the service", { timeout: 120_000 }, async () => {
    const agent = await mcp.ok("create_agent", { name: "Front desk" });
    await mcp.ok("buy_number", { agent_id: agent.agent_id });
    const input = { agent_id: agent.agent_id, to_number: "+14155550142" };
    const placed = await mcp.client.callTool({ name: "place_call", arguments: input });
    const callId = (placed.structuredContent as { call_id: string }).call_id;
    const { contents } = await mcp.client.readResource({ uri: "ui://agentline/call.html" });

    const { page, viewRequests } = await openHost();
    await page.evaluate(([html, args, result]) => (globalThis as any).showView(html, args, result), [
      (contents[0] as { text: string }).text,
      input,
      placed,
    ] as const);
    const view = page.frames().find((frame) => frame !== page.mainFrame())!;
    await view.locator("#status", { hasText: "in-progress" }).waitFor({ timeout: 15_000 });
    await expect(view.locator("#parties").textContent()).resolves.toContain("+14155550142");
    expect(await shownLines(view)).toEqual([]);
    // It follows the host's theme and style variables.
    await expect.poll(() => view.locator("body").evaluate((body) => (globalThis as any).getComputedStyle(body).color)).toBe("rgb(1, 2, 3)");
    expect(await view.locator("html").getAttribute("data-theme")).toBe("dark");

    // The far party speaks (the sandbox's tool), the agent answers: each line shows once said.
    const { turn_id } = await mcp.ok("simulate_caller_speech", { call_id: callId, text: "Hello, is this the front desk?" });
    expect(await waitForLines(view, 1)).toEqual([["user", "Caller Hello, is this the front desk?"]]);
    await mcp.ok("push_context", { call_id: callId, turn_id, text: "Yes, how can I help?" });
    expect(await waitForLines(view, 2)).toEqual([
      ["user", "Caller Hello, is this the front desk?"],
      ["assistant", "Agent Yes, how can I help?"],
    ]);
    await mcp.ok("simulate_caller_speech", { call_id: callId, text: "I would like to book a table." });
    expect((await waitForLines(view, 3))[2]).toEqual(["user", "Caller I would like to book a table."]);

    // Hang up from the view: the call ends at the service, and the view says so.
    expect(await view.locator("#hang-up").isEnabled()).toBe(true);
    await view.locator("#hang-up").click();
    await view.locator("#status", { hasText: "completed" }).waitFor({ timeout: 15_000 });
    expect(await view.locator("#hang-up").isDisabled()).toBe(true);
    expect(await mcp.ok("get_call", { call_id: callId })).toMatchObject({ status: "completed", ended_by: "agent" });
    expect((await mcp.ok("get_transcript", { call_id: callId })).transcript).toHaveLength(3);

    // Everything went through the host: its tool calls, and not one request from the view itself.
    const called = await page.evaluate(() => (globalThis as any).calledTools as string[]);
    expect(new Set(called)).toEqual(new Set(["watch_call", "hang_up_call"]));
    expect(viewRequests).toEqual([]);
    // Nor could it: its own CSP refuses a fetch (connect-src), even to the service.
    const refused = await view.evaluate(
      (url) =>
        new Promise((resolve) => {
          (globalThis as any).addEventListener("securitypolicyviolation", (event: any) => resolve(event.effectiveDirective), { once: true });
          setTimeout(() => resolve("no violation"), 5_000);
          fetch(url).catch(() => undefined);
        }),
      `${service.baseUrl}/health`,
    );
    expect(refused).toBe("connect-src");
    expect(await view.locator("#error").isHidden()).toBe(true);
    await page.close();
  });

  it("shown for get_call, starts from the call_id of its input: an ended call's whole transcript, no hang-up", { timeout: 60_000 }, async () => {
    const agent = await mcp.ok("create_agent", { name: "Looked up" });
    await mcp.ok("buy_number", { agent_id: agent.agent_id });
    const call = await mcp.ok("place_call", { agent_id: agent.agent_id, to_number: "+14155550143" });
    await mcp.ok("simulate_caller_speech", { call_id: call.call_id, text: "Goodbye." });
    await mcp.ok("simulate_caller_hangup", { call_id: call.call_id });
    const input = { call_id: call.call_id };
    const result = await mcp.client.callTool({ name: "get_call", arguments: input });
    const { contents } = await mcp.client.readResource({ uri: "ui://agentline/call.html" });

    const { page } = await openHost();
    await page.evaluate(([html, args, shown]) => (globalThis as any).showView(html, args, shown), [
      (contents[0] as { text: string }).text,
      input,
      result,
    ] as const);
    const view = page.frames().find((frame) => frame !== page.mainFrame())!;
    expect(await waitForLines(view, 1)).toEqual([["user", "Caller Goodbye."]]);
    await view.locator("#status", { hasText: "completed by the caller" }).waitFor({ timeout: 15_000 });
    expect(await view.locator("#hang-up").isDisabled()).toBe(true);
    await page.close();
  });
});
