import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRoutes } from "../gateway/routes/all-routes.js";
import { createAccount, type TestAccount } from "../harness/accounts.js";
import { Api } from "../harness/api.js";
import { RelayLeg } from "../harness/twilio/relay-leg.js";
import { twilioSignature } from "../harness/twilio/signing.js";
import { startTestService, type TestService } from "./support/service.js";
import { agentWithTwilioNumber, connectedTwilioCall, startTwilioService, type TwilioTestService } from "./support/twilio/service.js";

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

// The Twilio carrier's endpoints are the carrier's: only a request Twilio signed with the
// account's auth token, for the exact URL it called, gets any effect. Anything else is a 403
// that changes nothing and emits nothing.
describe("the Twilio carrier's webhooks and ConversationRelay socket", () => {
  let twilioEnv: TwilioTestService;
  let api: Api;
  let line: { agentId: string; phoneNumber: string; callId: string; callSid: string };

  beforeAll(async () => {
    twilioEnv = await startTwilioService();
    api = new Api(twilioEnv.service.baseUrl, (await createAccount(twilioEnv.service.core)).apiKey);
    const { agentId, phoneNumber } = await agentWithTwilioNumber(api);
    const { callId, callSid } = await connectedTwilioCall(api, twilioEnv.twilio, agentId);
    line = { agentId, phoneNumber, callId, callSid };
  });
  afterAll(() => twilioEnv?.stop());

  /** Everything a forged request could change or emit. */
  const state = async () => ({
    calls: (await api.get("/v1/calls", { query: { agent_id: line.agentId } })).body.data,
    messages: (await api.get("/v1/messages", { query: { agent_id: line.agentId } })).body.data,
    transcript: (await api.get(`/v1/calls/${line.callId}/transcript`)).body,
    events: (await api.get("/v1/events/peek", { query: { agent_id: line.agentId } })).body.data,
    balance: (await api.get("/v1/billing/balance")).body.balance,
  });

  const requests = () => {
    const base = twilioEnv.service.baseUrl;
    const common = { AccountSid: twilioEnv.twilio.accountSid, ApiVersion: "2010-04-01", From: "+14155550177", To: line.phoneNumber };
    return [
      {
        label: "voice webhook",
        url: `${base}/twilio/voice`,
        params: { ...common, CallSid: "CA" + "1".repeat(32), CallStatus: "ringing", Direction: "inbound" },
      },
      {
        label: "status callback",
        url: `${base}/twilio/status?call_id=${line.callId}`,
        params: { ...common, CallSid: line.callSid, CallStatus: "completed", CallDuration: "5" },
      },
      { label: "messaging webhook", url: `${base}/twilio/sms`, params: { ...common, MessageSid: "SM" + "1".repeat(32), Body: "forged", NumMedia: "0" } },
    ];
  };

  it("refuses unsigned, wrongly signed, replayed-elsewhere and tampered webhooks with 403, changing nothing", async () => {
    const before = await state();
    const standIn = twilioEnv.twilio;
    for (const { label, url, params } of requests()) {
      const otherUrl = url.replace(/\/twilio\/\w+/, "/twilio/elsewhere");
      const attempts = [
        await standIn.post(url, params, { signature: null }),
        await standIn.post(url, params, { signature: twilioSignature("0".repeat(32), url, params) }),
        await standIn.post(url, params, { signature: twilioSignature(standIn.authToken, otherUrl, params) }),
        await standIn.post(url, { ...params, From: "+14155550100" }, { signature: twilioSignature(standIn.authToken, url, params) }),
      ];
      for (const res of attempts) {
        expect(res.status, label).toBe(403);
        expect(JSON.parse(res.text)).toMatchObject({ code: "forbidden", status: 403 });
      }
    }
    expect(await state()).toEqual(before);
  });

  it("refuses a correctly signed webhook for another Twilio account (403)", async () => {
    const before = await state();
    for (const { url, params } of requests()) expect((await twilioEnv.twilio.post(url, { ...params, AccountSid: "AC" + "9".repeat(32) })).status).toBe(403);
    expect(await state()).toEqual(before);
  });

  it("refuses a relay handshake without Twilio's signature (403): no socket, no turn", async () => {
    const before = await state();
    const url = `${twilioEnv.service.baseUrl.replace(/^http/, "ws")}/twilio/relay/${line.callId}`;
    for (const signature of [null, twilioSignature("0".repeat(32), url), twilioSignature(twilioEnv.twilio.authToken, url + "x")]) {
      await expect(RelayLeg.connect(url, twilioEnv.twilio.authToken, { signature })).rejects.toMatchObject({ status: 403 });
    }
    expect(await state()).toEqual(before);
  });

  it("mounts only the active carrier's endpoints", async () => {
    const sandboxApi = new Api(service.baseUrl, alice.apiKey);
    expect((await sandboxApi.request("POST", "/twilio/voice", { unchecked: true })).status).toBe(404);
    expect((await api.post("/v1/sandbox/inbound/calls", { to_number: line.phoneNumber, from_number: "+14155550177" })).status).toBe(404);
    await expect(RelayLeg.connect(`${service.baseUrl.replace(/^http/, "ws")}/twilio/relay/${line.callId}`, twilioEnv.twilio.authToken)).rejects.toMatchObject({
      status: 404,
    });
    const { body } = await api.get("/openapi.json");
    expect(Object.keys(body.paths).filter((p) => p.startsWith("/v1/sandbox") || p.startsWith("/twilio"))).toEqual([]);
  });
});
