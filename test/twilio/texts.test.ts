import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { expectBalanceIsLedgerSum, ledgerOf } from "../billing/support.js";
import { drainEvents } from "../support/telephony.js";
import { agentWithTwilioNumber, startTwilioService, type TwilioTestService } from "../support/twilio/service.js";

let env: TwilioTestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  env = await startTwilioService();
  account = await createAccount(env.service.core, undefined, { creditMicros: 100_000_000 });
  api = new Api(env.service.baseUrl, account.apiKey);
});
afterAll(() => env?.stop());

const balance = async () => (await api.get("/v1/billing/balance")).body.balance;
const messageOf = async (agentId: string, messageId: string) =>
  (await api.get("/v1/messages", { query: { agent_id: agentId } })).body.data.find((m: any) => m.message_id === messageId);

describe("sending a text through Twilio", () => {
  it("creates the Message with StatusCallback naming our text; signed callbacks move it to sent, then delivered", async () => {
    const { agentId, phoneNumber } = await agentWithTwilioNumber(api);
    await drainEvents(api, agentId);
    const sent = await api.post("/v1/messages", { agent_id: agentId, to_number: "+14155550150", text: "Confirmed: Tuesday 3 pm ✓" });
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({ status: "queued", segments: 1, from_number: phoneNumber });
    const [request] = env.twilio.requestsOf("CreateMessage").slice(-1);
    expect(request!.form).toEqual({
      To: "+14155550150",
      From: phoneNumber,
      Body: "Confirmed: Tuesday 3 pm ✓",
      StatusCallback: `${env.service.baseUrl}/twilio/sms-status?message_id=${sent.body.message_id}`,
    });
    const sid = env.twilio.lastMessage().sid;
    expect(await env.twilio.messageStatus(sid, "sending")).toEqual({ status: 204, text: "" });
    expect((await messageOf(agentId, sent.body.message_id)).status).toBe("queued");
    expect((await env.twilio.messageStatus(sid, "sent"))?.status).toBe(204);
    expect((await env.twilio.messageStatus(sid, "delivered"))?.status).toBe(204);
    expect(await messageOf(agentId, sent.body.message_id)).toMatchObject({ status: "delivered", error_code: null });
    const events = await drainEvents(api, agentId);
    expect(events.map((e) => [e.event_type, e.payload.status])).toEqual([
      ["sms.status", "sent"],
      ["sms.status", "delivered"],
    ]);
  });

  it("applies each status once and never backwards: a repeat or a late `sent` changes nothing", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const sent = await api.post("/v1/messages", { agent_id: agentId, to_number: "+14155550151", text: "Hello" });
    const sid = env.twilio.lastMessage().sid;
    await env.twilio.messageStatus(sid, "delivered");
    await env.twilio.messageStatus(sid, "delivered");
    await env.twilio.messageStatus(sid, "sent");
    await env.twilio.messageStatus(sid, "undelivered", { errorCode: 30005 });
    expect((await messageOf(agentId, sent.body.message_id)).status).toBe("delivered");
    expect((await drainEvents(api, agentId)).map((e) => [e.event_type, e.payload.status])).toEqual([["sms.status", "delivered"]]);
  });

  it("undelivered carries Twilio's ErrorCode and stays charged; failed is refunded", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    await drainEvents(api, agentId);
    const before = Number(await balance());
    const lost = await api.post("/v1/messages", { agent_id: agentId, to_number: "+14155550152", text: "One" });
    await env.twilio.messageStatus(env.twilio.lastMessage().sid, "sent");
    await env.twilio.messageStatus(env.twilio.lastMessage().sid, "undelivered", { errorCode: 30005 });
    const failed = await api.post("/v1/messages", { agent_id: agentId, to_number: "+14155550153", text: "Two" });
    await env.twilio.messageStatus(env.twilio.lastMessage().sid, "failed", { errorCode: 30008 });
    expect(await messageOf(agentId, lost.body.message_id)).toMatchObject({ status: "undelivered", error_code: "30005" });
    expect(await messageOf(agentId, failed.body.message_id)).toMatchObject({ status: "failed", error_code: "30008" });
    const events = await drainEvents(api, agentId);
    expect(events.map((e) => [e.payload.status, e.payload.error_code])).toEqual([
      ["sent", undefined],
      ["undelivered", "30005"],
      ["failed", "30008"],
    ]);
    expect(Number(await balance())).toBeCloseTo(before - 0.0083, 6);
    await expectBalanceIsLedgerSum(env.service.core, account.accountId);
  });

  it("refuses a forged or unsigned status callback with 403 and changes nothing", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const sent = await api.post("/v1/messages", { agent_id: agentId, to_number: "+14155550154", text: "Hi" });
    const message = env.twilio.lastMessage();
    const url = message.statusCallback!;
    const params = { AccountSid: env.twilio.accountSid, MessageSid: message.sid, MessageStatus: "delivered", From: message.from, To: message.to };
    expect((await env.twilio.post(url, params, { signature: null })).status).toBe(403);
    expect((await env.twilio.post(url, params, { signature: "bm90IGEgc2lnbmF0dXJl" })).status).toBe(403);
    // Signed, but about no text of ours: another message_id, or another MessageSid than our text's.
    expect((await env.twilio.post(url.replace(sent.body.message_id, "msg_other"), params)).status).toBe(204);
    expect((await env.twilio.post(url, { ...params, MessageSid: `SM${"b".repeat(32)}` })).status).toBe(204);
    expect((await messageOf(agentId, sent.body.message_id)).status).toBe("queued");
  });
});

describe("a text Twilio refuses at once", () => {
  it("to a recipient who texted STOP: refused here first (409, no Messages create); START lets it through", async () => {
    const { agentId, phoneNumber } = await agentWithTwilioNumber(api);
    await env.twilio.textIn({ from: "+14155550155", to: phoneNumber, body: "STOP" });
    const creates = env.twilio.requestsOf("CreateMessage").length;
    const before = await balance();
    const refused = await api.post("/v1/messages", { agent_id: agentId, to_number: "+14155550155", text: "Hi" });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("recipient_opted_out");
    expect(env.twilio.requestsOf("CreateMessage")).toHaveLength(creates);
    expect(await balance()).toBe(before);
    await env.twilio.textIn({ from: "+14155550155", to: phoneNumber, body: "start" });
    expect((await api.post("/v1/messages", { agent_id: agentId, to_number: "+14155550155", text: "Hi again" })).status).toBe(201);
  });

  it.each([
    [21610, 409, "recipient_opted_out", null],
    [21408, 422, "validation_error", "to_number"],
    [21612, 422, "validation_error", "to_number"],
    [21211, 422, "validation_error", "to_number"],
  ] as const)("Twilio %i: %i %s, the charge refunded and no text kept", async (code, status, problem, field) => {
    const { agentId } = await agentWithTwilioNumber(api);
    await drainEvents(api, agentId);
    const before = await balance();
    const ledger = (await ledgerOf(env.service.core, account.accountId)).length;
    env.twilio.fail("CreateMessage", { status: 400, code, message: `Twilio error ${code}` });
    const refused = await api.post("/v1/messages", { agent_id: agentId, to_number: "+14155550156", text: "Hi" });
    expect(refused.status).toBe(status);
    expect(refused.body.code).toBe(problem);
    if (field) expect(refused.body.errors.map((e: any) => e.field)).toEqual([field]);
    expect(await balance()).toBe(before);
    const rows = (await ledgerOf(env.service.core, account.accountId)).slice(ledger);
    expect(rows.map((r) => r.amountMicros)).toEqual([-8_300, 8_300]);
    expect((await api.get("/v1/messages", { query: { agent_id: agentId } })).body.data).toEqual([]);
    expect((await api.get("/v1/messages/conversations", { query: { agent_id: agentId } })).body.data).toEqual([]);
    expect(await drainEvents(api, agentId)).toEqual([]);
    await expectBalanceIsLedgerSum(env.service.core, account.accountId);
    // Twilio's opt-out is kept: the next text is refused here, with no charge and no Messages create.
    const creates = env.twilio.requestsOf("CreateMessage").length;
    const next = await api.post("/v1/messages", { agent_id: agentId, to_number: "+14155550156", text: "Hi" });
    expect(next.status).toBe(code === 21610 ? 409 : 201);
    expect(env.twilio.requestsOf("CreateMessage")).toHaveLength(code === 21610 ? creates : creates + 1);
  });

  it("Twilio failing (500): 502 carrier_unavailable, refunded", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const before = await balance();
    env.twilio.fail("CreateMessage", { status: 500, code: 20500, message: "Internal Server Error" });
    const refused = await api.post("/v1/messages", { agent_id: agentId, to_number: "+14155550157", text: "Hi" });
    expect(refused.status).toBe(502);
    expect(refused.body.code).toBe("carrier_unavailable");
    expect(await balance()).toBe(before);
    expect((await api.get("/v1/messages", { query: { agent_id: agentId } })).body.data).toEqual([]);
  });
});
