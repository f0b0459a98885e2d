import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRoutes } from "../gateway/routes/all-routes.js";
import { createAccount, type TestAccount } from "../harness/accounts.js";
import { Api } from "../harness/api.js";
import { concrete } from "./support/routes.js";
import { startTestService, type TestService } from "./support/service.js";

// The route dispatcher (gateway/http/router.ts) matches paths itself rather than through express
// routers: these are the rules it keeps from them, each of which a client may lean on.
let service: TestService;
let account: TestAccount;
let api: Api;
let agentId: string;

beforeAll(async () => {
  service = await startTestService();
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
  agentId = (await api.post("/v1/agents", { name: "routed" })).body.agent_id;
});
afterAll(() => service?.stop());

const routes = allRoutes({ carrier: "sandbox" });

describe("route matching", () => {
  it("takes a path in any case and with a trailing slash", async () => {
    for (const path of [`/v1/agents/${agentId}`, `/v1/agents/${agentId}/`, `/V1/AGENTS/${agentId}`]) {
      const res = await api.get(path, { unchecked: true });
      expect(res.status, path).toBe(200);
      expect(res.body.agent_id).toBe(agentId);
    }
  });

  it("hands the handler its path params percent-decoded", async () => {
    // The decoded id is looked up (and not found): the 404 names it as decoded.
    const res = await api.get("/v1/agents/agt%5Fnone", { unchecked: true });
    expect(res.status).toBe(404);
    expect(res.body.detail).toContain("agt_none");
  });

  it("answers a malformed percent-escape in a path param with a 400 naming it", async () => {
    const res = await fetch(`${service.baseUrl}/v1/agents/%E0%A4%A`, { headers: { authorization: `Bearer ${api.key}` } });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; detail: string };
    expect(body.code).toBe("bad_request");
    expect(body.detail).toContain("%E0%A4%A");
  });

  it("serves HEAD with the GET route, without a body", async () => {
    const res = await fetch(`${service.baseUrl}/v1/agents/${agentId}`, { method: "HEAD", headers: { authorization: `Bearer ${api.key}` } });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
  });

  it("writes a JSON answer as express's res.json did: charset, exact length, and no body for HEAD", async () => {
    const headers = { authorization: `Bearer ${api.key}` };
    const get = await fetch(`${service.baseUrl}/v1/agents/${agentId}`, { headers });
    const text = await get.text();
    expect(get.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(get.headers.get("content-length")).toBe(String(Buffer.byteLength(text)));
    expect(JSON.parse(text).agent_id).toBe(agentId);
    expect(get.headers.get("etag")).toBeNull();
    const head = await fetch(`${service.baseUrl}/v1/agents/${agentId}`, { method: "HEAD", headers });
    expect(head.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(head.headers.get("content-length")).toBe(get.headers.get("content-length"));
    // A consuming read (the mailbox) is never to be cached, and is sized like any other.
    const events = await fetch(`${service.baseUrl}/v1/events?agent_id=${agentId}`, { headers });
    const eventsText = await events.text();
    expect(events.status).toBe(200);
    expect(events.headers.get("cache-control")).toBe("no-store");
    expect(events.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(events.headers.get("content-length")).toBe(String(Buffer.byteLength(eventsText)));
  });

  it("answers OPTIONS with the methods the path takes, and another method with a 405 naming them", async () => {
    const options = await fetch(`${service.baseUrl}/v1/agents/${agentId}`, { method: "OPTIONS" });
    expect(options.status).toBe(200);
    const allowed = options.headers.get("allow")!.split(", ").sort();
    expect(allowed).toEqual(["DELETE", "GET", "HEAD", "PATCH"]);
    const put = await api.request("PUT", `/v1/agents/${agentId}`, { unchecked: true });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")!.split(", ").sort()).toEqual(allowed);
  });

  it("tries the routes of a group in order: a literal segment is not taken for a param", async () => {
    // /v1/calls/{call_id} and GET /v1/calls share a group; /v1/agents/{id}/... and /v1/agents too.
    const list = await api.get("/v1/agents", { unchecked: true });
    expect(list.status).toBe(200);
    expect(list.body.data.map((a: { agent_id: string }) => a.agent_id)).toContain(agentId);
    const unknown = await api.get(`/v1/agents/${agentId}/nothing-here`, { unchecked: true });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("not_found");
  });
});

describe("routing", () => {
  // Routes are found by their group (gateway/http/router.ts routeHandler), not by trying each in turn.
  it("finds every route by its path as express would: any letter case, with or without a trailing slash", async () => {
    const { agent_id } = (await api.post("/v1/agents", { name: "routing" })).body;
    for (const path of [`/v1/agents/${agent_id}`, `/V1/AGENTS/${agent_id}`, `/v1/Agents/${agent_id}/`]) {
      const res = await fetch(`${service.baseUrl}${path}`, { headers: { authorization: `Bearer ${account.apiKey}` } });
      expect(res.status, path).toBe(200);
      expect(((await res.json()) as { agent_id: string }).agent_id, path).toBe(agent_id);
    }
    // Every route is reached (whatever it then answers), none falls through to "no route".
    for (const route of routes) {
      const res = await fetch(`${service.baseUrl}${concrete(route.path)}`, {
        method: route.method.toUpperCase(),
        headers: { authorization: `Bearer ${account.apiKey}` },
      });
      const text = await res.text();
      expect(text, `${route.method} ${route.path}`).not.toContain("No route for");
      expect(res.status, `${route.method} ${route.path}`).not.toBe(405);
    }
  });

  it("answers 404 for a path of no route, and 405 naming the methods for a route's path with another method", async () => {
    const unknown = await fetch(`${service.baseUrl}/v1/nothing-here`, { headers: { authorization: `Bearer ${account.apiKey}` } });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { code: string }).code).toBe("not_found");
    const wrongMethod = await fetch(`${service.baseUrl}/v1/voices`, { method: "DELETE", headers: { authorization: `Bearer ${account.apiKey}` } });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toContain("GET");
  });
});
