import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { httpMcp } from "../support/mcp.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
let api: Api;
let apiKey: string;

beforeAll(async () => {
  // A public BASE_URL, as behind a proxy: its origin is this service's own.
  service = await startTestService({ env: { BASE_URL: "https://phone.example.com" } });
  apiKey = (await createAccount(service.core)).apiKey;
  // Requests go to the listening address; the contract is read from there too.
  api = new Api(`http://127.0.0.1:${service.port}`, apiKey);
});
afterAll(() => service?.stop());

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "origin-test", version: "1.0.0" } },
};
const STREAMABLE = { accept: "application/json, text/event-stream" };

describe("Origin on /mcp (DNS rebinding and cross-site browsers)", () => {
  it("answers 403 to a foreign Origin even with a valid key", async () => {
    const res = await api.post("/mcp", initialize, { headers: { ...STREAMABLE, origin: "https://evil.example" } });
    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ code: "origin_not_allowed", status: 403 });
    expect(res.body.detail).toContain("https://phone.example.com");
  });

  it.each([["https://phone.example.com"], ["http://localhost:5173"], ["http://127.0.0.1:8080"], ["http://[::1]:3000"]])("serves Origin %s", async (origin) => {
    const res = await api.post("/mcp", initialize, { headers: { ...STREAMABLE, origin } });
    expect(res.status).toBe(200);
    expect(res.body.result.serverInfo.name).toBe("agentline");
  });

  it("serves a request without Origin (MCP clients and SDKs send none)", async () => {
    const res = await api.post("/mcp", initialize, { headers: STREAMABLE });
    expect(res.status).toBe(200);
  });

  it("asks for credentials before judging the Origin", async () => {
    const res = await api.post("/mcp", initialize, { headers: { ...STREAMABLE, origin: "https://evil.example" }, key: null });
    expect(res.status).toBe(401);
  });
});

describe("/mcp answers as its OpenAPI entry says (every response here is checked against it)", () => {
  it("answers 406 as a problem when Accept lacks text/event-stream", async () => {
    const res = await api.post("/mcp", initialize, { headers: { accept: "application/json" } });
    expect(res.status).toBe(406);
    expect(res.body).toMatchObject({ code: "not_acceptable", detail: expect.stringContaining("text/event-stream") });
  });

  it("answers 415 as a problem to a JSON body that is not application/json", async () => {
    const res = await api.request("POST", "/mcp", { raw: JSON.stringify(initialize), contentType: "application/vnd.api+json", headers: STREAMABLE });
    expect(res.status).toBe(415);
    expect(res.body.code).toBe("unsupported_media_type");
  });

  it("answers 400 with a JSON-RPC error, as documented, to a message the transport cannot read", async () => {
    const res = await api.post("/mcp", { jsonrpc: "2.0" }, { headers: STREAMABLE });
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({ jsonrpc: "2.0", error: { code: -32700 } });
  });

  it("documents 400 (both shapes), 403 and 406", async () => {
    const op = (await api.get("/openapi.json")).body.paths["/mcp"].post;
    expect(Object.keys(op.responses["400"].content).sort()).toEqual(["application/json", "application/problem+json"]);
    expect(op.responses["400"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/JsonRpcError" });
    expect(op.responses["403"].content["application/problem+json"]).toBeDefined();
    expect(op.responses["406"].content["application/problem+json"]).toBeDefined();
  });
});

describe("tools/call of an unknown tool", () => {
  it("is a JSON-RPC error -32602 (invalid params), not a tool result", async () => {
    const mcp = await httpMcp(`http://127.0.0.1:${service.port}`, apiKey);
    try {
      const failure = await mcp.client.callTool({ name: "no_such_tool", arguments: {} }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(McpError);
      expect((failure as McpError).code).toBe(-32602);
      expect((failure as McpError).message).toContain("no_such_tool");
    } finally {
      await mcp.close();
    }
  });
});
