import { getToolUiResourceUri, isToolVisibilityAppOnly, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/app-bridge";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { httpMcp, type McpSession } from "../support/mcp.js";
import { startTestService, type TestService } from "../support/service.js";

// The live call view as an MCP client sees it (DESIGN §9c): which tools point at it, the one
// resource and its CSP, the app-only tool. Through the MCP SDK's own Client over Streamable HTTP.
const VIEW = "ui://agentline/call.html";
let service: TestService;
let mcp: McpSession;

beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000" } });
  mcp = await httpMcp(service.baseUrl, (await createAccount(service.core)).apiKey);
});
afterAll(async () => {
  await mcp?.close();
  await service?.stop();
});

describe("tools/list", () => {
  it("points place_call, get_call and transfer_call at the view, and keeps watch_call for the app alone", async () => {
    const { tools } = await mcp.client.listTools();
    // Read with ext-apps' own host helpers, as a host reads them.
    const showing = tools.filter((tool) => getToolUiResourceUri(tool) !== undefined).map((tool) => tool.name);
    expect(showing.sort()).toEqual(["get_call", "place_call", "transfer_call", "watch_call"]);
    for (const name of showing) {
      const tool = tools.find((t) => t.name === name)!;
      expect(tool._meta).toMatchObject({ ui: { resourceUri: VIEW }, "ui/resourceUri": VIEW });
      // Nothing else of the listing changes (the spending hint, absent where false: 0088): what a host without apps sees stays as it was.
      expect(tool._meta?.["agentline/spends_money"] ?? false).toBe(name === "place_call" || name === "transfer_call");
    }
    expect(tools.filter(isToolVisibilityAppOnly).map((tool) => tool.name)).toEqual(["watch_call"]);
    expect(tools.find((t) => t.name === "watch_call")!._meta!.ui).toEqual({ resourceUri: VIEW, visibility: ["app"] });
    expect(tools.find((t) => t.name === "place_call")!._meta!.ui).toEqual({ resourceUri: VIEW });
  });
});

describe("the resource", () => {
  it("declares resources without subscriptions or list changes", () => {
    expect(mcp.client.getServerCapabilities()?.resources).toEqual({});
  });

  it("lists the one view, text/html;profile=mcp-app, with a CSP that allows no outside domain", async () => {
    const { resources } = await mcp.client.listResources();
    expect(resources).toEqual([
      expect.objectContaining({
        uri: VIEW,
        mimeType: "text/html;profile=mcp-app",
        _meta: { ui: { csp: { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] }, prefersBorder: true } },
      }),
    ]);
    expect(RESOURCE_MIME_TYPE).toBe("text/html;profile=mcp-app");
  });

  it("reads as one self-contained HTML document: inline script and style, its own CSP meta, nothing loaded", async () => {
    const { contents } = await mcp.client.readResource({ uri: VIEW });
    expect(contents).toHaveLength(1);
    const [content] = contents as [{ uri: string; mimeType: string; text: string; _meta: any }];
    expect(content.uri).toBe(VIEW);
    expect(content.mimeType).toBe(RESOURCE_MIME_TYPE);
    expect(content._meta.ui.csp).toEqual({ connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] });
    const html = content.text;
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">`);
    // One inline script (the bundled view with ext-apps' App), no script or stylesheet from anywhere.
    expect(html.match(/<script\b[^>]*>/g)).toEqual(["<script>"]);
    expect(html).not.toMatch(/<script[^>]+src=|<link\b|<iframe\b|<img\b/i);
    expect(html).toContain('id="hang-up"');
    expect(html).toContain("ui/initialize");
  });

  it("answers an unknown resource with resource-not-found naming the one there is", async () => {
    const error = await mcp.client.readResource({ uri: "ui://agentline/other.html" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32002);
    expect((error as McpError).message).toContain('"ui://agentline/other.html"');
    expect((error as McpError).message).toContain(VIEW);
  });

  it("offers no resource templates (method not found)", async () => {
    const error = await mcp.client.listResourceTemplates().catch((e: unknown) => e);
    expect((error as McpError).code).toBe(-32601);
  });
});

describe("watch_call (the view's own tool)", () => {
  it("returns the call and only the lines after the ones the view has, and refuses a bad after", async () => {
    const agent = await mcp.ok("create_agent", { name: "Watched" });
    await mcp.ok("buy_number", { agent_id: agent.agent_id });
    const call = await mcp.ok("place_call", { agent_id: agent.agent_id, to_number: "+14155550142" });
    const first = await mcp.ok("watch_call", { call_id: call.call_id });
    expect(first).toMatchObject({ call: { call_id: call.call_id, status: "in-progress" }, lines: [], next: 0 });

    const { turn_id } = await mcp.ok("simulate_caller_speech", { call_id: call.call_id, text: "Is anyone there?" });
    await mcp.ok("push_context", { call_id: call.call_id, turn_id, text: "Yes, speaking." });
    const both = await mcp.ok("watch_call", { call_id: call.call_id, after: 0 });
    expect(both.lines.map((l: any) => [l.role, l.text])).toEqual([
      ["user", "Is anyone there?"],
      ["assistant", "Yes, speaking."],
    ]);
    expect(both.next).toBe(2);
    const rest = await mcp.ok("watch_call", { call_id: call.call_id, after: 1 });
    expect(rest.lines.map((l: any) => l.text)).toEqual(["Yes, speaking."]);
    expect((await mcp.ok("watch_call", { call_id: call.call_id, after: 2 })).lines).toEqual([]);
    // Past the end: nothing, and next stays where the view is.
    expect(await mcp.ok("watch_call", { call_id: call.call_id, after: 9 })).toMatchObject({ lines: [], next: 9 });

    expect(await mcp.fails("watch_call", { call_id: call.call_id, after: -1 })).toMatch(/after/);
    expect(await mcp.fails("watch_call", { call_id: call.call_id, after: "two" })).toMatch(/after/);
    expect(await mcp.fails("watch_call", { call_id: "call_nope" })).toMatch(/call_nope/);
    await mcp.ok("hang_up_call", { call_id: call.call_id });
    expect((await mcp.ok("watch_call", { call_id: call.call_id, after: 2 })).call).toMatchObject({ status: "completed", ended_by: "agent" });
  });
});
