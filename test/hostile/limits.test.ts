import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgent } from "../../core/agents/agents.js";
import { accountCounter } from "../../core/limits.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { type Bystander, bystander } from "../support/bystander.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";

// Each per-account ceiling refuses one more with a 429 (or, for a wait, a tool result) that
// names it and its size, and another account is not touched by it. Small ceilings here.
const LIMITS = { ACCOUNT_MAX_WAITS: "3", ACCOUNT_MAX_AGENTS: "5", ACCOUNT_MAX_REQUESTS: "2" };

let service: TestService;
let other: Bystander;
beforeAll(async () => {
  service = await startTestService({ env: { ...LIMITS, ALLOW_PRIVATE_WEBHOOKS: "1", WEBHOOK_TIMEOUT_MS: "5000" } });
  other = await bystander(service);
});
afterAll(() => service?.stop());

/** A wait_for_event call over MCP, as one JSON-RPC POST; its tool result. */
async function waitForEvent(account: TestAccount, timeoutSeconds: number): Promise<{ isError?: boolean; text: string }> {
  const res = await fetch(`${service.baseUrl}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${account.apiKey}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "wait_for_event", arguments: { timeout_seconds: timeoutSeconds } } }),
  });
  expect(res.status).toBe(200);
  const { result } = (await res.json()) as { result: { isError?: boolean; content: Array<{ text: string }> } };
  return { isError: result.isError, text: result.content[0]!.text };
}

function expectLimitReached(res: { status: number; body: any; headers: Headers }, limit: string, max: number) {
  expect(res.status).toBe(429);
  expect(res.body).toMatchObject({ code: "limit_reached", limit, max });
  expect(res.body.detail).toContain(limit);
  expect(res.headers.get("retry-after")).toBe("1");
}

describe("account_waits", () => {
  it("refuses a wait beyond the limit as a tool error naming it, counts waits apart from requests, and leaves another account's waits alone", async () => {
    const account = await createAccount(service.core);
    const api = new Api(service.baseUrl, account.apiKey);
    const held = [1, 2, 3].map(() => waitForEvent(account, 3));
    await expect.poll(() => accountCounter(service.core, "account_waits").count(account.accountId)).toBe(3);

    const refused = await waitForEvent(account, 1);
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain("limit_reached");
    expect(refused.text).toContain('"limit":"account_waits","max":3');
    // Three waits are held, yet requests still pass with account_requests at 2: a wait is no request in flight.
    expect((await api.get("/v1/agents")).status).toBe(200);
    expect(accountCounter(service.core, "account_requests").count(account.accountId)).toBe(0);
    // Another account waits as usual.
    const elsewhere = await waitForEvent(other.account, 1);
    expect(elsewhere.isError).toBeFalsy();
    await other.check();

    expect((await Promise.all(held)).map((w) => w.isError ?? false)).toEqual([false, false, false]);
    // The limit is of waits at once: once they ended, another may wait.
    expect((await waitForEvent(account, 1)).isError).toBeFalsy();
  });
});

describe("account_requests", () => {
  it("answers a request beyond the limit with 429 naming it, and serves another account meanwhile", async () => {
    const receiver = await startReceiver(() => ({ status: 200, afterMs: 1_000 }));
    try {
      const account = await createAccount(service.core);
      const api = new Api(service.baseUrl, account.apiKey);
      const { body: agent } = await api.post("/v1/agents", { name: "slow receiver" });
      await api.post("/v1/webhooks", { agent_id: agent.agent_id, url: receiver.url });
      // Each test waits for its delivery, which the receiver holds (and an agent's deliveries go one at a time): two requests in flight.
      const held = [1, 2].map(() => api.post("/v1/webhooks/test", undefined, { query: { agent_id: agent.agent_id } }));
      await expect.poll(() => accountCounter(service.core, "account_requests").count(account.accountId)).toBe(2);
      expectLimitReached(await api.get(`/v1/agents/${agent.agent_id}`, { unchecked: true }), "account_requests", 2);
      await other.check();
      expect((await Promise.all(held)).map((r) => r.body.delivered)).toEqual([true, true]);
      expect((await api.get(`/v1/agents/${agent.agent_id}`)).status).toBe(200);
    } finally {
      await receiver.close();
    }
  });
});

describe("account_agents", () => {
  it("lets exactly one of many concurrent creations at the limit pass, refuses the rest naming it, and another account still creates", async () => {
    const account = await createAccount(service.core);
    const api = new Api(service.baseUrl, account.apiKey);
    for (let i = 0; i < 4; i++) expect((await api.post("/v1/agents", { name: `agent ${i}` })).status).toBe(201);
    // Straight to core: over HTTP, account_requests (2 here) would let only two race.
    const racing = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => createAgent(service.core, account.accountId, { name: `racer ${i}` })));
    expect(racing.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const refusal of racing.filter((r) => r.status === "rejected"))
      expect(refusal.reason).toMatchObject({ code: "limit_reached", extra: { limit: "account_agents", max: 5 } });
    expectLimitReached(await api.post("/v1/agents", { name: "one more" }, { unchecked: true }), "account_agents", 5);
    const { body: listed } = await api.get("/v1/agents", { query: { limit: 100 } });
    expect(listed.data).toHaveLength(5);

    expect((await new Api(service.baseUrl, other.account.apiKey).post("/v1/agents", { name: "another" })).status).toBe(201);
    // Deleting one makes room for one.
    expect((await api.delete(`/v1/agents/${listed.data[0].agent_id}`)).status).toBe(200);
    expect((await api.post("/v1/agents", { name: "in its place" })).status).toBe(201);
  });
});

describe("/.well-known/service.json", () => {
  it("lists every limit with this deployment's value and what happens beyond it", async () => {
    const { body } = await new Api(service.baseUrl).get("/.well-known/service.json");
    expect(Object.keys(body.limits).sort()).toEqual(["account_agents", "account_requests", "account_sockets", "account_waits", "ip_connections"]);
    expect(body.limits.account_waits).toMatchObject({ max: 3, setting: "ACCOUNT_MAX_WAITS" });
    expect(body.limits.account_agents).toMatchObject({ max: 5, setting: "ACCOUNT_MAX_AGENTS" });
    expect(body.limits.account_requests).toMatchObject({ max: 2, setting: "ACCOUNT_MAX_REQUESTS" });
    expect(body.limits.account_sockets).toMatchObject({ max: service.core.config.limits.accountSockets, setting: "ACCOUNT_MAX_SOCKETS" });
    expect(body.limits.ip_connections).toMatchObject({ max: service.core.config.limits.ipConnections, setting: "IP_MAX_CONNECTIONS" });
    for (const limit of Object.values(body.limits) as Array<{ counts: string; beyond: string }>) {
      expect(limit.counts.length).toBeGreaterThan(10);
      expect(limit.beyond.length).toBeGreaterThan(10);
    }
  });
});
