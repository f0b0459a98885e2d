import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { expectBalanceIsLedgerSum } from "../billing/support.js";
import { agentWithTwilioNumber, startTwilioService, type TwilioTestService } from "../support/twilio/service.js";

let env: TwilioTestService;
let api: Api;
let accountId: string;

beforeAll(async () => {
  // Short enough to keep the timeout cases quick, long enough for a loaded machine.
  env = await startTwilioService({ TWILIO_TIMEOUT_MS: "3000" });
  const account = await createAccount(env.service.core, undefined, { creditMicros: 100_000_000 });
  accountId = account.accountId;
  api = new Api(env.service.baseUrl, account.apiKey);
});
afterAll(() => env?.stop());

const balance = async () => (await api.get("/v1/billing/balance")).body.balance as string;
const serverError = { status: 500, code: 20500, message: "Internal Server Error" };
const badCredentials = { status: 401, code: 20003, message: "Authenticate" };

describe("Twilio unavailable: 502 carrier_unavailable, nothing charged, nothing written", () => {
  it.each([
    ["a 5xx on the purchase", "CreateIncomingPhoneNumber", serverError],
    ["a timeout on the purchase", "CreateIncomingPhoneNumber", "hang"],
    ["a timeout on the search", "ListAvailablePhoneNumberLocal", "hang"],
    ["refused credentials", "ListAvailablePhoneNumberLocal", badCredentials],
  ] as const)("buying a number with %s", async (_label, operation, fault) => {
    const agentId = (await api.post("/v1/agents", { name: "No number" })).body.agent_id;
    const before = await balance();
    env.twilio.fail(operation, fault);
    const bought = await api.post("/v1/numbers", { agent_id: agentId });
    expect(bought.status).toBe(502);
    expect(bought.body).toMatchObject({ code: "carrier_unavailable", title: "Carrier unavailable" });
    expect(bought.body.detail).toMatch(/Nothing was charged or changed/);
    expect(await balance()).toBe(before);
    expect((await api.get("/v1/numbers", { query: { agent_id: agentId } })).body.data).toEqual([]);
    await expectBalanceIsLedgerSum(env.service.core, accountId);
  });

  it.each([
    ["a 5xx", serverError],
    ["a timeout", "hang"],
  ] as const)("placing a call with %s leaves no call; a retry with the same Idempotency-Key goes through", async (_label, fault) => {
    const { agentId } = await agentWithTwilioNumber(api);
    const before = await balance();
    env.twilio.fail("CreateCall", fault);
    const key = `call-${Math.random()}`;
    const placed = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550150" }, { headers: { "Idempotency-Key": key } });
    expect(placed.status).toBe(502);
    expect(placed.body.code).toBe("carrier_unavailable");
    expect((await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data).toEqual([]);
    expect((await api.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data).toEqual([]);
    expect(await balance()).toBe(before);
    const retried = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550150" }, { headers: { "Idempotency-Key": key } });
    expect(retried.status).toBe(201);
    await api.post(`/v1/calls/${retried.body.call_id}/hangup`);
  });

  it("buying a number whose purchase went through at Twilio but whose answer was lost deletes it there again", async () => {
    const agentId = (await api.post("/v1/agents", { name: "Lost answer" })).body.agent_id;
    const before = await balance();
    env.twilio.fail("CreateIncomingPhoneNumber", "lost-answer");
    const bought = await api.post("/v1/numbers", { agent_id: agentId });
    expect(bought.status).toBe(502);
    expect(bought.body.code).toBe("carrier_unavailable");
    const tried = String(env.twilio.requestsOf("CreateIncomingPhoneNumber").at(-1)!.form.PhoneNumber);
    expect([...env.twilio.numbers.values()].map((n) => n.phoneNumber)).not.toContain(tried);
    expect(env.twilio.requestsOf("DeleteIncomingPhoneNumber").length).toBeGreaterThan(0);
    expect(await balance()).toBe(before);
    expect((await api.get("/v1/numbers", { query: { agent_id: agentId } })).body.data).toEqual([]);
  });

  it("placing a call that Twilio placed although its answer was lost ends it at Twilio at its first report", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const before = await balance();
    env.twilio.fail("CreateCall", "lost-answer");
    const placed = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550152" });
    expect(placed.status).toBe(502);
    expect((await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data).toEqual([]);
    const orphan = env.twilio.lastCall();
    expect(orphan.status).toBe("queued");
    expect((await env.twilio.statusCallback(orphan, "initiated")).status).toBe(204);
    await env.twilio.settled();
    expect(env.twilio.requestsOf("UpdateCall").at(-1)).toMatchObject({ params: { Sid: orphan.sid }, form: { Status: "canceled" } });
    expect(env.twilio.calls.get(orphan.sid)!.status).toBe("canceled");
    expect((await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data).toEqual([]);
    expect((await api.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data).toEqual([]);
    expect(await balance()).toBe(before);
  });

  it("releasing a number while Twilio fails keeps it active", async () => {
    const { numberId } = await agentWithTwilioNumber(api);
    env.twilio.fail("DeleteIncomingPhoneNumber", serverError);
    const released = await api.post(`/v1/numbers/${numberId}/release`);
    expect(released.status).toBe(502);
    expect((await api.get(`/v1/numbers/${numberId}`)).body).toMatchObject({ status: "active", released_at: null });
    expect((await api.post(`/v1/numbers/${numberId}/release`)).body.status).toBe("released");
  });
});

describe("Twilio refusing a request the client can act on", () => {
  it("refuses a purchase the balance cannot pay with 402 before asking Twilio, so the operator is not billed for it", async () => {
    const poor = new Api(env.service.baseUrl, (await createAccount(env.service.core, undefined, { creditMicros: 100_000 })).apiKey);
    const agentId = (await poor.post("/v1/agents", { name: "Short of money" })).body.agent_id;
    const asked = env.twilio.requests.length;
    const bought = await poor.post("/v1/numbers", { agent_id: agentId });
    expect(bought.status).toBe(402);
    expect(bought.body).toMatchObject({ code: "insufficient_balance", required: "1.150000", balance: "0.100000" });
    expect(env.twilio.requests.length).toBe(asked);
  });

  it("answers 422 naming to_number for a destination Twilio cannot call (21211)", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const placed = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550999" });
    expect(placed.status).toBe(422);
    expect(placed.body.errors).toEqual([{ field: "to_number", in: "body", message: expect.stringContaining("+14155550999 cannot be called (Twilio 21211") }]);
    expect((await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data).toEqual([]);
  });

  it("answers 409 when the agent's number is no longer in the Twilio account", async () => {
    const { agentId, phoneNumber } = await agentWithTwilioNumber(api);
    const held = [...env.twilio.numbers.values()].find((n) => n.phoneNumber === phoneNumber)!;
    env.twilio.numbers.delete(held.sid);
    const placed = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550151" });
    expect(placed.status).toBe(409);
    expect(placed.body.code).toBe("number_unavailable");
  });

  it("buys the next number offered when the first was taken meanwhile (21422)", async () => {
    const agentId = (await api.post("/v1/agents", { name: "Second choice" })).body.agent_id;
    env.twilio.fail("CreateIncomingPhoneNumber", { status: 400, code: 21422, message: "Phone number is not available" });
    const bought = await api.post("/v1/numbers", { agent_id: agentId, area_code: "212" });
    expect(bought.status).toBe(201);
    expect(bought.body.phone_number).toMatch(/^\+121255501\d\d$/);
    expect(
      env.twilio
        .requestsOf("CreateIncomingPhoneNumber")
        .slice(-2)
        .map((r) => r.form.PhoneNumber),
    ).toHaveLength(2);
  });

  it.each([
    [{ country: "GB", area_code: "20" }, "area_code"],
    [{ country: "FR" }, "country"],
  ])("answers 422 for what Twilio does not offer: %j", async (body, field) => {
    const agentId = (await api.post("/v1/agents", { name: "Abroad" })).body.agent_id;
    const bought = await api.post("/v1/numbers", { agent_id: agentId, ...body });
    expect(bought.status).toBe(422);
    expect(bought.body.errors[0].field).toBe(field);
  });
});

describe("numbers at Twilio", () => {
  it("buys with the webhooks pointing at the service, and releases by deleting it at Twilio", async () => {
    const { numberId, phoneNumber } = await agentWithTwilioNumber(api);
    const held = [...env.twilio.numbers.values()].find((n) => n.phoneNumber === phoneNumber)!;
    expect(held).toMatchObject({
      voiceUrl: `${env.service.baseUrl}/twilio/voice`,
      smsUrl: `${env.service.baseUrl}/twilio/sms`,
      statusCallback: `${env.service.baseUrl}/twilio/status`,
    });
    expect((await api.post(`/v1/numbers/${numberId}/release`)).body.status).toBe("released");
    expect(env.twilio.numbers.has(held.sid)).toBe(false);
  });

  it("attaches a number already in the account by pointing its webhooks at the service", async () => {
    const agentId = (await api.post("/v1/agents", { name: "Attached" })).body.agent_id;
    // Area code 312: no search in this file offers it, so no purchase here can have taken it.
    const held = env.twilio.ownNumber("+13125550123");
    const attached = await api.post("/v1/numbers/attach", undefined, { query: { phone_number: "+13125550123", agent_id: agentId } });
    expect(attached.status).toBe(201);
    expect(attached.body).toMatchObject({ phone_number: "+13125550123", source: "attached", status: "active" });
    expect(held.voiceUrl).toBe(`${env.service.baseUrl}/twilio/voice`);
  });

  it("refuses to attach a number that is not in the Twilio account (422 phone_number)", async () => {
    const agentId = (await api.post("/v1/agents", { name: "Not ours" })).body.agent_id;
    const attached = await api.post("/v1/numbers/attach", undefined, { query: { phone_number: "+13125550124", agent_id: agentId } });
    expect(attached.status).toBe(422);
    expect(attached.body.errors[0]).toMatchObject({ field: "phone_number" });
    expect((await api.get("/v1/numbers", { query: { agent_id: agentId } })).body.data).toEqual([]);
  });

  it("reassigns a number without asking Twilio anything", async () => {
    const { numberId } = await agentWithTwilioNumber(api);
    const other = (await api.post("/v1/agents", { name: "Other" })).body.agent_id;
    const before = env.twilio.requests.length;
    expect((await api.patch(`/v1/numbers/${numberId}/reassign`, undefined, { query: { agent_id: other } })).body.agent_id).toBe(other);
    expect(env.twilio.requests.length).toBe(before);
  });
});
