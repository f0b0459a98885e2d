import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { Validator } from "@seriousme/openapi-schema-validator";
import type { Router } from "express";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CODES } from "../core/errors.js";
import { createLogger } from "../core/logger.js";
import { createApp } from "../gateway/app.js";
import { defineRoute } from "../gateway/http/route.js";
import { allRoutes } from "../gateway/routes/all-routes.js";
import { Api } from "../harness/api.js";
import { Contract } from "../harness/contract.js";
import { startTestService, type TestService } from "./support/service.js";

let service: TestService;
let api: Api;

beforeAll(async () => {
  service = await startTestService();
  api = new Api(service.baseUrl);
});
afterAll(() => service?.stop());

/** Every "METHOD /path" the express app actually serves, read from its router. */
function mountedRoutes(router: Router): string[] {
  const found: string[] = [];
  const walk = (stack: any[]) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const method of Object.keys(layer.route.methods)) found.push(`${method.toUpperCase()} ${layer.route.path.replace(/:(\w+)/g, "{$1}")}`);
      } else if (layer.handle?.stack) walk(layer.handle.stack);
      else if (layer.handle?.groups)
        for (const group of layer.handle.groups.values()) for (const { method, route } of group) found.push(`${method} ${route.path}`);
    }
  };
  walk((router as any).stack);
  return found;
}

describe("/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const { body } = await api.get("/openapi.json");
    expect(body.openapi).toBe("3.1.0");
    const result = await new Validator().validate(body);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("describes every mounted route, and nothing that is not mounted", async () => {
    const { body } = await api.get("/openapi.json");
    const documented = Object.entries(body.paths as Record<string, object>).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    const app = createApp(service.core, allRoutes({ carrier: "sandbox" }));
    const mounted = mountedRoutes(app.router as unknown as Router);
    expect(mounted.length).toBeGreaterThan(10);
    expect(documented.sort()).toEqual(mounted.sort());
  });

  it("gives each authenticated operation its security, a 401 and problem responses", async () => {
    const { body } = await api.get("/openapi.json");
    for (const route of allRoutes({ carrier: "sandbox" })) {
      const op = body.paths[route.path][route.method];
      expect(op.operationId).toBe(route.operationId);
      expect(op.responses.default.content["application/problem+json"].schema.$ref).toBe("#/components/schemas/Problem");
      if (route.auth === "none") continue;
      expect(op.security, route.path).toContainEqual(route.auth === "agent_token_or_payment" ? { agentToken: [] } : { apiKey: [] });
      expect(op.responses["401"]).toBeDefined();
      if (route.price) expect(op.responses["402"]).toBeDefined();
    }
    expect(body.paths["/v1/agents"].post.requestBody.$ref).toBe("#/components/requestBodies/CreateAgentRequest");
  });

  it("never advertises a query parameter as nullable (a query string cannot carry null)", async () => {
    const { body } = await api.get("/openapi.json");
    for (const [path, ops] of Object.entries(body.paths as Record<string, Record<string, any>>)) {
      for (const op of Object.values(ops)) {
        for (const param of op.parameters ?? []) expect(JSON.stringify(param.schema), `${path} ${param.name}`).not.toContain("null");
      }
    }
  });

  it("rejects a response that does not match it (the checker every test uses can fail)", async () => {
    const contract = await Contract.load(service.baseUrl);
    const agent = {
      agent_id: "agt_1",
      name: "n",
      description: null,
      owner_number: null,
      voice_id: null,
      greeting: null,
      metadata: {},
      created_at: "2026-01-01T00:00:00.000Z",
      updated_at: "2026-01-01T00:00:00.000Z",
    };
    expect(() => contract.check("GET", "/v1/agents/agt_1", 200, "application/json", agent)).not.toThrow();
    expect(() => contract.check("GET", "/v1/agents/agt_1", 200, "application/json", { ...agent, name: 5 })).toThrow(/does not match/);
    expect(() => contract.check("GET", "/v1/agents/agt_1", 200, "application/json", { ...agent, created_at: "yesterday" })).toThrow(/does not match/);
    expect(() => contract.check("GET", "/v1/agents/agt_1", 418, "application/json", {})).toThrow(/does not document/);
    expect(() => contract.check("GET", "/v1/unknown", 200, "application/json", {})).toThrow(/not in \/openapi.json/);
  });
});

describe("/health", () => {
  it("answers 200 when the database answers", async () => {
    const res = await api.get("/health");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "ok", database: "ok" });
  });

  it("answers 503 when the database cannot", async () => {
    const broken = await startTestService();
    try {
      await broken.core.dbHandle.close();
      const res = await new Api(broken.baseUrl).get("/health");
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ status: "unavailable", database: "unreachable" });
    } finally {
      await broken.stop();
    }
  });
});

describe("/ and /docs", () => {
  it("/ links a client to the reference, /openapi.json and /.well-known/service.json, and sends a browser to /docs", async () => {
    const root = await fetch(`${service.baseUrl}/`, { headers: { accept: "application/json" } });
    expect(root.status).toBe(200);
    const links = (await root.json()) as Record<string, string>;
    expect(links).toMatchObject({
      docs: `${service.baseUrl}/docs`,
      openapi: `${service.baseUrl}/openapi.json`,
      service: `${service.baseUrl}/.well-known/service.json`,
    });
    for (const url of [links.docs!, links.openapi!, links.service!]) expect((await fetch(url)).status, url).toBe(200);
    const browser = await fetch(`${service.baseUrl}/`, { headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" }, redirect: "manual" });
    expect(browser.status).toBe(302);
    expect(browser.headers.get("location")).toBe("/docs");
  });

  it("/docs loads its script from this service and names no other host (it works with no internet)", async () => {
    const page = await (await fetch(`${service.baseUrl}/docs`)).text();
    expect([...page.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)].map((m) => m[1])).toEqual(["/docs/scalar.js"]);
    // No CDN, no web fonts, no stylesheet from elsewhere: not a single absolute URL in the page.
    expect(page.match(/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/gi) ?? []).toEqual([]);
    const script = await fetch(`${service.baseUrl}/docs/scalar.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toMatch(/javascript/);
    expect((await script.text()).length).toBeGreaterThan(1_000_000);
  });
});

describe("/.well-known/service.json", () => {
  it("names the service and links to its documents and sign-in methods", async () => {
    const { body } = await api.get("/.well-known/service.json");
    expect(body).toMatchObject({ name: "agentline", base_url: service.baseUrl, carrier: "sandbox" });
    expect(body.links).toEqual({
      docs: `${service.baseUrl}/docs`,
      openapi: `${service.baseUrl}/openapi.json`,
      mcp: `${service.baseUrl}/mcp`,
      payments: `${service.baseUrl}/.well-known/agent-payments.json`,
      health: `${service.baseUrl}/health`,
      oauth_protected_resource: `${service.baseUrl}/.well-known/oauth-protected-resource/mcp`,
      oauth_authorization_server: `${service.baseUrl}/.well-known/oauth-authorization-server`,
    });
    expect(body.auth.methods.map((m: any) => m.type)).toEqual(["api_key", "email_otp", "agent_token", "x402", "mpp", "oauth"]);
    expect((await fetch(body.links.openapi)).status).toBe(200);
    expect((await fetch(body.auth.methods[1].request, { method: "POST" })).status).toBe(422);
  });
});

describe("problems", () => {
  it("serves a description at every problem type URI", async () => {
    for (const [code, entry] of Object.entries(ERROR_CODES)) {
      const res = await api.get(`/problems/${code}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ code, status: entry.status, title: entry.title, description: entry.when });
    }
    expect((await api.get("/problems/toString")).status).toBe(404);
  });

  it("hides an unexpected error's detail behind the request id", async () => {
    const lines: string[] = [];
    const logger = createLogger("error", new Writable({ write: (chunk, _e, done) => (lines.push(String(chunk)), done()) }));
    const failing = defineRoute({
      operationId: "explode",
      method: "get",
      path: "/explode",
      summary: "fails",
      tags: [],
      auth: "none",
      response: { status: 200, description: "never" },
      handler: async () => {
        throw new Error("connection string postgres://secret@db");
      },
    });
    const app = createApp({ ...service.core, logger }, [failing]);
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/explode`);
      const body = (await res.json()) as Record<string, unknown>;
      expect(res.status).toBe(500);
      expect(JSON.stringify(body)).not.toContain("secret");
      expect(body).toMatchObject({ status: 500, code: "internal_error", request_id: res.headers.get("x-request-id") });
      expect(Object.keys(body).sort()).toEqual(["code", "detail", "request_id", "status", "title", "type"]);
      expect(lines.join("")).toContain("postgres://secret@db");
    } finally {
      server.close();
    }
  });
});

describe("request ids", () => {
  it("echoes a caller's X-Request-Id and makes one when absent or unusable", async () => {
    expect((await api.get("/health", { headers: { "x-request-id": "trace-abc.123" } })).headers.get("x-request-id")).toBe("trace-abc.123");
    expect((await api.get("/health")).headers.get("x-request-id")).toMatch(/^req_[0-9a-z]{26}$/);
    expect((await api.get("/health", { headers: { "x-request-id": "bad id with spaces" } })).headers.get("x-request-id")).toMatch(/^req_/);
    const problem = await api.get("/v1/agents", { headers: { "x-request-id": "trace-401" } });
    expect(problem.body.request_id).toBe("trace-401");
  });

  it("puts the request id on every log line written while serving the request, core's included", async () => {
    const lines: any[] = [];
    const logger = createLogger(
      "debug",
      new Writable({
        write: (chunk, _e, done) => (
          lines.push(
            ...String(chunk)
              .trim()
              .split("\n")
              .map((l) => JSON.parse(l)),
          ),
          done()
        ),
      }),
    );
    const logged = await startTestService({ logger });
    try {
      const client = new Api(logged.baseUrl);
      await client.contract();
      lines.length = 0;
      // With no SMTP_URL, core logs the mail instead of sending it.
      await client.post("/v1/auth/otp", { email: "log@example.com" }, { headers: { "x-request-id": "trace-log-1" } });
      await new Promise((r) => setTimeout(r, 50));
      expect(lines.length).toBeGreaterThanOrEqual(2);
      expect(lines.some((l) => l.msg?.includes("mail not sent"))).toBe(true);
      for (const line of lines) expect(line.request_id, JSON.stringify(line)).toBe("trace-log-1");
    } finally {
      await logged.stop();
    }
  });
});
