import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { mcpClient } from "./support.js";

// The paid MCP tools are discoverable where the paid routes are: /.well-known/x402 (the bazaar
// extension's MCP input) and the service document, with the prices the tools charge.
let service: TestService;
let api: Api;
beforeAll(async () => {
  service = await startTestService();
  api = new Api(service.baseUrl);
});
afterAll(() => service?.stop());

describe("discovery of the paid MCP tools", () => {
  it("/.well-known/x402 lists each tool as an mcp resource with its inputSchema, transport and price", async () => {
    const { body } = await api.get("/.well-known/x402");
    const client = await mcpClient(service.baseUrl);
    const { tools } = await client.listTools();
    await client.close();
    const mcp = body.resources.filter((r: { type: string }) => r.type === "mcp");
    expect(mcp.map((r: { resource: string }) => r.resource).sort()).toEqual(tools.map((t) => `mcp://tool/${t.name}`).sort());
    const buy = mcp.find((r: { resource: string }) => r.resource === "mcp://tool/buy_number");
    expect(buy).toMatchObject({ x402Version: 2, url: `${service.baseUrl}/mcp/x402` });
    expect(buy.accepts.map((a: { amount: string }) => a.amount).sort()).toEqual(["1150000", "1500000", "2150000"]);
    expect(buy.extensions.bazaar.info.input).toEqual({
      type: "mcp",
      tool: "buy_number",
      description: expect.stringMatching(/^Buy a number/),
      transport: "streamable-http",
      inputSchema: tools.find((t) => t.name === "buy_number")!.inputSchema,
    });
    // The HTTP resources are still there, first.
    expect(body.resources[0].type).toBe("http");
  });

  it("the service document names /mcp/x402 and each paid tool's price", async () => {
    const { body } = await api.get("/.well-known/service.json");
    const x402 = body.auth.methods.find((m: { type: string }) => m.type === "x402");
    expect(x402.mcp).toMatchObject({ url: `${service.baseUrl}/mcp/x402`, transport: "streamable-http" });
    expect(x402.mcp.tools).toContainEqual(expect.objectContaining({ tool: "get_transcript", price: "0.001000" }));
    expect(x402.mcp.tools).toContainEqual(
      expect.objectContaining({ tool: "buy_number", price: null, prices: { local: "1.150000", toll_free: "2.150000", mobile: "1.500000" } }),
    );
    const payments = await api.get("/.well-known/agent-payments.json");
    expect(payments.body.links.mcp_x402).toBe(`${service.baseUrl}/mcp/x402`);
  });
});
