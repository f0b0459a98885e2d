import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRoutes } from "../gateway/routes/all-routes.js";
import { createAccount, type TestAccount } from "./support/accounts.js";
import { Api } from "./support/api.js";
import { startTestService, type TestService } from "./support/service.js";

let service: TestService;
let alice: TestAccount;
let mallory: TestAccount;
let revokedKey: string;

beforeAll(async () => {
  service = await startTestService();
  alice = await createAccount(service.core);
  mallory = await createAccount(service.core);
  const api = new Api(service.baseUrl, mallory.apiKey);
  const { body } = await api.post("/v1/auth/keys", { name: "to revoke" });
  await api.delete(`/v1/auth/keys/${body.key_id}`);
  revokedKey = body.api_key;
});
afterAll(() => service?.stop());

const paying = (auth: string) => auth === "agent_token_or_payment" || auth === "payment";

// Every route that needs credentials, with placeholder path parameters.
const protectedRoutes = allRoutes({ carrier: "sandbox" })
  .filter((r) => r.auth !== "none" && !paying(r.auth))
  .map((r) => ({ label: `${r.method.toUpperCase()} ${r.path}`, method: r.method.toUpperCase(), path: r.path.replace(/\{[^}]+\}/g, "x_123") }));

describe("every API-key route", () => {
  it("covers every authenticated route", () => expect(protectedRoutes.length).toBeGreaterThanOrEqual(30));

  it.each(protectedRoutes)("$label answers 401 with no key, a malformed header, an unknown key and a revoked key", async ({ method, path }) => {
    const api = new Api(service.baseUrl);
    const attempts = [
      await api.request(method, path, { key: null, body: method === "GET" || method === "DELETE" ? undefined : {} }),
      await api.request(method, path, { key: null, headers: { authorization: "Basic dXNlcjpwYXNz" } }),
      await api.request(method, path, { key: "sk_" + "A".repeat(43) }),
      await api.request(method, path, { key: "not-even-a-key" }),
      await api.request(method, path, { key: revokedKey }),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(401);
      expect(res.body.code).toBe("unauthorized");
      expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="agentline"/);
    }
  });
});

// Routes paid for per request: no credentials is a 402 with both challenges (or a 422 for input
// that cannot be priced), never a free pass; a credential that is wrong is a 401.
const paidRoutes = allRoutes({ carrier: "sandbox" })
  .filter((r) => paying(r.auth))
  .map((r) => ({ label: `${r.method.toUpperCase()} ${r.path}`, method: r.method.toUpperCase(), path: r.path.replace(/\{[^}]+\}/g, "x_123"), auth: r.auth }));

describe("every paid route", () => {
  it("covers the no-signup family", () => expect(paidRoutes.length).toBeGreaterThanOrEqual(12));

  it.each(paidRoutes)("$label answers 402 or 422 with no credentials, and 401 with a wrong one", async ({ method, path, auth }) => {
    const api = new Api(service.baseUrl);
    const body = method === "GET" || method === "DELETE" ? undefined : {};
    const bare = await api.request(method, path, { key: null, body, query: path.includes("topup") ? { amount: "1" } : undefined });
    expect([402, 422]).toContain(bare.status);
    if (bare.status === 402) expect(bare.headers.get("payment-required")).toBeTruthy();
    for (const key of ["at_" + "A".repeat(43), revokedKey, ...(auth === "agent_token_or_payment" ? [alice.apiKey] : [])]) {
      const res = await api.request(method, path, { key, body, query: path.includes("topup") ? { amount: "1" } : undefined });
      expect(res.status, key).toBe(401);
    }
  });
});

describe("tenancy", () => {
  it("answers 404 for another account's agent on every agent route, and changes nothing", async () => {
    const alices = new Api(service.baseUrl, alice.apiKey);
    const mallorys = new Api(service.baseUrl, mallory.apiKey);
    const { body: agent } = await alices.post("/v1/agents", { name: "Private" });
    for (const res of [
      await mallorys.get(`/v1/agents/${agent.agent_id}`),
      await mallorys.patch(`/v1/agents/${agent.agent_id}`, { name: "Taken" }),
      await mallorys.delete(`/v1/agents/${agent.agent_id}`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("not_found");
    }
    expect((await mallorys.get("/v1/agents")).body.data).toEqual([]);
    expect((await alices.get(`/v1/agents/${agent.agent_id}`)).body.name).toBe("Private");
  });

  it("gives the same 404 for a missing agent as for a foreign one", async () => {
    const mallorys = new Api(service.baseUrl, mallory.apiKey);
    const missing = await mallorys.get("/v1/agents/agt_00000000000000000000000000");
    expect(missing.status).toBe(404);
    expect(missing.body.detail).toMatch(/^No agent with id "agt_0+" exists on this account\.$/);
  });
});
