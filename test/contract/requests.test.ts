import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintAgentToken } from "../../core/auth/agent-tokens.js";
import { allRoutes } from "../../gateway/routes/all-routes.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { concrete } from "../support/routes.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";

// What every route asks of a request, as a client reads it: one rule for query strings, a body
// where the route takes one, Idempotency-Key where it is honoured, and reads that consume never
// cached. How a path finds its route is in test/routing.test.ts.
let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService();
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});

/** A wallet of its own: an account's agent_token, and the account's API key to look at it. */
async function freshWallet() {
  const owner = await createAccount(service.core);
  const { agent_token: token } = await mintAgentToken(service.core.db, owner.accountId, { kind: "api_key", id: owner.keyId });
  return { wallet: new Api(service.baseUrl, token), owner: new Api(service.baseUrl, owner.apiKey) };
}
afterAll(() => service?.stop());

const routes = allRoutes({ carrier: "sandbox" });

/**
 * The rule, as a client reads it: every POST that acts for an account takes an Idempotency-Key,
 * except where its answer carries a secret shown once, and the top-up (a payment is its own key).
 */
const SECRET_OR_PAYMENT = ["mintApiKey", "mintAgentToken", "rotateAgentToken", "setWebhook", "walletSetWebhook", "topup"];
const takesIdempotencyKey = (r: (typeof routes)[number]) =>
  r.method === "post" && r.auth !== "none" && r.path !== "/mcp" && !SECRET_OR_PAYMENT.includes(r.operationId);

/** The credential a route takes from a test: an API key where one is accepted, else none (a payment route validates first). */
const keyFor = (auth: string) => (auth.startsWith("api_key") || auth === "mcp" ? account.apiKey : null);

describe("one rule for query strings", () => {
  it("answers 422 on every route to a query parameter it does not define, saying it was in the query", async () => {
    expect(routes.length).toBeGreaterThan(60);
    // The one exception: the AgentID callback is a redirect target whose parameters the identity
    // provider chooses, and OAuth clients must ignore the ones they do not know (RFC 6749 §4.1.2).
    for (const route of routes.filter((r) => r.operationId !== "agentIdCallback")) {
      const res = await api.request(route.method.toUpperCase(), concrete(route.path), {
        query: { zz_unknown: "1" },
        key: keyFor(route.auth),
        contentType: "application/json",
      });
      const where = `${route.method.toUpperCase()} ${route.path}`;
      expect(res.status, where).toBe(422);
      expect(res.body.code, where).toBe("validation_error");
      expect(res.body.errors, where).toContainEqual({
        field: "zz_unknown",
        in: "query",
        message: expect.stringMatching(/^is not a recognised query parameter/),
      });
    }
  });

  it("says where each invalid field was: query, body or path", async () => {
    const agentId = (await api.post("/v1/agents", { name: "Where" })).body.agent_id;
    const res = await api.post(`/v1/calls/call_x/context`, { text: 5 }, { query: { turn_id: "" } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([
      { field: "turn_id", in: "query", message: expect.any(String) },
      { field: "text", in: "body", message: expect.any(String) },
    ]);
    // A rule core checks past the schemas is placed by the route's schemas too.
    const range = await api.get("/v1/billing/expenditure", { query: { from: "2026-11-01" } });
    expect(range.body.errors).toEqual([{ field: "to", in: "query", message: expect.any(String) }]);
    const hook = await api.post("/v1/webhooks", { agent_id: agentId, url: "https://127.0.0.1/x" });
    expect(hook.body.errors).toEqual([{ field: "url", in: "body", message: expect.any(String) }]);
  });
});

describe("a route with a body needs one", () => {
  it("refuses an empty body on every such route, naming the body, instead of reading it as {}", async () => {
    const withBody = routes.filter((r) => r.body && r.bodyRequired !== false);
    // Every spending route is among them.
    expect(withBody.map((r) => r.operationId)).toEqual(
      expect.arrayContaining([
        "buyNumber",
        "placeCall",
        "walletBuyNumber",
        "walletRenewNumber",
        "walletPlaceCall",
        "walletSendText",
        "sendText",
        "walletUpdateAgent",
        "walletSetWebhook",
        "sandboxInboundCall",
        "sandboxInboundSms",
      ]),
    );
    for (const route of withBody) {
      const res = await api.request(route.method.toUpperCase(), concrete(route.path), { raw: "", key: keyFor(route.auth) });
      const where = `${route.method.toUpperCase()} ${route.path}`;
      expect(res.status, where).toBe(422);
      expect(res.body.errors, where).toContainEqual({ field: "body", in: "body", message: expect.stringMatching(/^is required: send a JSON object/) });
    }
  });

  it("buys nothing when a wallet's purchase arrives with an empty body, and buys with {}", async () => {
    const { wallet, owner } = await freshWallet();
    const balance = async () => (await owner.get("/v1/billing/balance")).body.balance;
    const before = await balance();
    const empty = await wallet.request("POST", "/v1/x402/numbers/buy", { raw: "" });
    expect(empty.status).toBe(422);
    expect(empty.body.errors).toEqual([{ field: "body", in: "body", message: "is required: send a JSON object ({} takes the defaults)" }]);
    expect(await balance()).toBe(before);
    expect((await owner.get("/v1/numbers")).body.data).toEqual([]);
    expect((await wallet.post("/v1/x402/numbers/buy", {})).status).toBe(201);
  });
});

describe("one rule for Idempotency-Key", () => {
  it("honours it on POST /v1/agents: the same key and body create one agent, another body is a 409", async () => {
    const owner = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
    const headers = { "idempotency-key": "create-agent-1" };
    const first = await owner.post("/v1/agents", { name: "Once" }, { headers });
    const again = await owner.post("/v1/agents", { name: "Once" }, { headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body.agent_id).toBe(first.body.agent_id);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect((await owner.get("/v1/agents")).body.data).toHaveLength(1);
    const other = await owner.post("/v1/agents", { name: "Twice" }, { headers });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe("idempotency_conflict");
  });

  it("honours it on a wallet's purchase with an agent_token, and refuses it with a per-request payment", async () => {
    const { wallet } = await freshWallet();
    const headers = { "idempotency-key": "wallet-buy-1" };
    const first = await wallet.post("/v1/x402/numbers/buy", { area_code: "415" }, { headers });
    const again = await wallet.post("/v1/x402/numbers/buy", { area_code: "415" }, { headers });
    expect(first.status).toBe(201);
    expect(again.body.number.number_id).toBe(first.body.number.number_id);
    const paying = await wallet.post("/v1/x402/numbers/buy", { area_code: "415" }, { headers: { "idempotency-key": "wallet-buy-2" }, key: null });
    expect(paying.status).toBe(422);
    expect(paying.body.errors).toEqual([{ field: "Idempotency-Key", in: "header", message: expect.stringMatching(/^is not supported with a payment: /) }]);
  });

  it("is documented on every route that honours it, and refused with a 422 naming the header on every other", async () => {
    const document = (await api.get("/openapi.json")).body;
    const honouring = routes.filter(takesIdempotencyKey);
    expect(honouring.map((r) => r.operationId)).toEqual(
      expect.arrayContaining(["createAgent", "buyNumber", "placeCall", "walletBuyNumber", "submitFeedback", "pushContext"]),
    );
    for (const route of honouring) {
      const params = document.paths[route.path][route.method].parameters ?? [];
      expect(params, route.operationId).toContainEqual(expect.objectContaining({ name: "Idempotency-Key", in: "header" }));
      expect(document.paths[route.path][route.method].responses["409"], route.operationId).toBeDefined();
    }
    const refusing = routes.filter((r) => !takesIdempotencyKey(r));
    expect(refusing.map((r) => r.operationId)).toEqual(expect.arrayContaining(["mintApiKey", "setWebhook", "requestOtp", "mcp", "topup", "listAgents"]));
    for (const route of refusing) {
      const res = await api.request(route.method.toUpperCase(), concrete(route.path), { headers: { "idempotency-key": "k-1" }, key: keyFor(route.auth) });
      const where = `${route.method.toUpperCase()} ${route.path}`;
      expect(res.status, where).toBe(422);
      expect(res.body.errors, where).toEqual([{ field: "Idempotency-Key", in: "header", message: expect.stringMatching(/^is not supported on /) }]);
    }
  });
});

describe("consuming reads", () => {
  it("are never cacheable: GET /v1/events answers no-store without an ETag, and If-None-Match cannot turn it into a 304", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    await api.get("/v1/events", { query: { agent_id: agentId } });
    await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550160", text: "one" });
    const first = await api.get("/v1/events", { query: { agent_id: agentId } });
    expect(first.body.data.map((e: any) => e.payload.text)).toEqual(["one"]);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect(first.headers.get("etag")).toBeNull();
    await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550160", text: "two" });
    const conditional = await api.get("/v1/events", { query: { agent_id: agentId }, headers: { "if-none-match": "*" } });
    expect(conditional.status).toBe(200);
    expect(conditional.body.data.map((e: any) => e.payload.text)).toEqual(["two"]);
    // A peek is not consuming: it keeps its validators.
    expect((await api.get("/v1/events/peek", { query: { agent_id: agentId } })).headers.get("cache-control")).toBeNull();
  });

  it("refuse HEAD, which would consume events it never shows", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    await api.get("/v1/events", { query: { agent_id: agentId } });
    await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550160", text: "kept" });
    const head = await fetch(`${service.baseUrl}/v1/events?agent_id=${agentId}`, { method: "HEAD", headers: { authorization: `Bearer ${account.apiKey}` } });
    expect(head.status).toBe(405);
    expect(head.headers.get("allow")).toBe("GET");
    expect((await api.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data.map((e: any) => e.payload.text)).toEqual(["kept"]);
  });

  it("include the wallet's poll, GET /v1/x402/events", async () => {
    const { wallet } = await freshWallet();
    expect((await wallet.post("/v1/x402/numbers/buy", {})).status).toBe(201);
    const polled = await wallet.get("/v1/x402/events");
    expect(polled.status).toBe(200);
    expect(polled.headers.get("cache-control")).toBe("no-store");
    expect(polled.headers.get("etag")).toBeNull();
  });
});
