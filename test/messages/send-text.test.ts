import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { Contract } from "../../harness/contract.js";
import { expectBalanceIsLedgerSum, ledgerOf } from "../billing/support.js";
import { messageType } from "../support/protocol2.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber, drainEvents } from "../support/telephony.js";

// The default rate card: 0.0083 USD a segment.
const PER_SEGMENT = 8_300;

let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService({ env: { ALLOW_PRIVATE_WEBHOOKS: "1" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());

const send = (body: Record<string, unknown>) => api.post("/v1/messages", body);
const inbound = (to: string, from: string, text: string) => api.post("/v1/sandbox/inbound/sms", { to_number: to, from_number: from, text });
const balance = async () => Number((await api.get("/v1/billing/balance")).body.balance);

describe("sending a text on the sandbox", () => {
  it("answers 201 queued, then sms.status sent and delivered; charged per segment through the ledger", async () => {
    const { agentId, phoneNumber, numberId } = await agentWithNumber(api);
    const before = await balance();
    const sent = await send({ agent_id: agentId, to_number: "+14155550123", text: "Your table for two is booked for 7 pm." });
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({
      message_id: expect.stringMatching(/^msg_/),
      agent_id: agentId,
      number_id: numberId,
      direction: "outbound",
      from_number: phoneNumber,
      to_number: "+14155550123",
      text: "Your table for two is booked for 7 pm.",
      status: "queued",
      segments: 1,
      error_code: null,
    });
    const events = await drainEvents(api, agentId);
    expect(events.map((e) => [e.event_type, e.payload.status])).toEqual([
      ["sms.status", "sent"],
      ["sms.status", "delivered"],
    ]);
    expect(events[1].payload).toMatchObject({
      message_id: sent.body.message_id,
      conversation_id: sent.body.conversation_id,
      from_number: phoneNumber,
      to_number: "+14155550123",
      segments: 1,
    });
    expect(events[1].payload).not.toHaveProperty("error_code");
    const listed = await api.get("/v1/messages", { query: { agent_id: agentId } });
    expect(listed.body.data).toEqual([expect.objectContaining({ message_id: sent.body.message_id, status: "delivered", direction: "outbound" })]);
    expect(await balance()).toBeCloseTo(before - PER_SEGMENT / 1e6, 6);
    const rows = (await ledgerOf(service.core, account.accountId)).filter((r) => r.messageId === sent.body.message_id);
    expect(rows.map((r) => [r.category, r.item, r.amountMicros, r.quantity])).toEqual([["sms", "sms.outbound", -PER_SEGMENT, 1]]);
    await expectBalanceIsLedgerSum(service.core, account.accountId);
  });

  it("counts segments as carriers do and charges each: 161 plain characters are 2, an emoji text of 71 units is 2", async () => {
    const { agentId } = await agentWithNumber(api);
    const long = await send({ agent_id: agentId, to_number: "+14155550124", text: "a".repeat(161) });
    expect(long.body.segments).toBe(2);
    const euro = await send({ agent_id: agentId, to_number: "+14155550124", text: "€".repeat(80) });
    expect(euro.body.segments).toBe(1);
    const emoji = await send({ agent_id: agentId, to_number: "+14155550124", text: `${"📞".repeat(35)}!` });
    expect(emoji.body.segments).toBe(2);
    const longest = await send({ agent_id: agentId, to_number: "+14155550124", text: "b".repeat(1600) });
    expect(longest.body.segments).toBe(11);
    const rows = (await ledgerOf(service.core, account.accountId)).filter((r) => [long, euro, emoji, longest].some((m) => m.body.message_id === r.messageId));
    expect(rows.map((r) => [r.quantity, -r.amountMicros])).toEqual([
      [2, 2 * PER_SEGMENT],
      [1, PER_SEGMENT],
      [2, 2 * PER_SEGMENT],
      [11, 11 * PER_SEGMENT],
    ]);
  });

  it("joins the thread with the recipient, and goes from the number named in from_number", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    const second = await api.post("/v1/numbers", { agent_id: agentId });
    await inbound(phoneNumber, "+14155550125", "Do you deliver?");
    const reply = await send({ agent_id: agentId, to_number: "+14155550125", text: "We do.", from_number: second.body.phone_number });
    expect(reply.status).toBe(201);
    expect(reply.body.from_number).toBe(second.body.phone_number);
    expect(reply.body.number_id).toBe(second.body.number_id);
    const threads = (await api.get("/v1/messages/conversations", { query: { agent_id: agentId } })).body.data;
    expect(threads).toEqual([
      expect.objectContaining({ remote_number: "+14155550125", message_count: 2, last_message: expect.objectContaining({ text: "We do." }) }),
    ]);
    expect(reply.body.conversation_id).toBe(threads[0].conversation_id);
    const inboundListed = (await api.get("/v1/messages", { query: { conversation_id: threads[0].conversation_id } })).body.data;
    expect(inboundListed.map((m: any) => [m.direction, m.status, m.segments])).toEqual([
      ["outbound", "delivered", 1],
      ["inbound", "received", null],
    ]);
  });

  it("to a number ending 0003: accepted, then sms.status failed with its error code, and the charge refunded", async () => {
    const { agentId } = await agentWithNumber(api);
    const before = await balance();
    const sent = await send({ agent_id: agentId, to_number: "+14155550003", text: "Hello" });
    expect(sent.status).toBe(201);
    expect(sent.body.status).toBe("queued");
    const events = await drainEvents(api, agentId);
    expect(events.map((e) => e.event_type)).toEqual(["sms.status"]);
    expect(events[0].payload).toMatchObject({ message_id: sent.body.message_id, status: "failed", error_code: "30003" });
    const [listed] = (await api.get("/v1/messages", { query: { agent_id: agentId } })).body.data;
    expect(listed).toMatchObject({ status: "failed", error_code: "30003" });
    expect(await balance()).toBe(before);
    const rows = (await ledgerOf(service.core, account.accountId)).filter((r) => r.messageId === sent.body.message_id);
    expect(rows.map((r) => r.amountMicros)).toEqual([-PER_SEGMENT, PER_SEGMENT]);
    await expectBalanceIsLedgerSum(service.core, account.accountId);
  });

  it("an Idempotency-Key retry sends and charges once", async () => {
    const { agentId } = await agentWithNumber(api);
    const headers = { "Idempotency-Key": `text-${agentId}` };
    const body = { agent_id: agentId, to_number: "+14155550126", text: "Once only" };
    const first = await api.post("/v1/messages", body, { headers });
    const again = await api.post("/v1/messages", body, { headers });
    expect(again.body.message_id).toBe(first.body.message_id);
    expect((await api.get("/v1/messages", { query: { agent_id: agentId } })).body.data).toHaveLength(1);
  });
});

describe("usage", () => {
  it("counts the segments of sent texts, refunds deducted, apart from received texts", async () => {
    const own = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
    const { agentId, phoneNumber } = await agentWithNumber(own);
    await own.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550132", text: "Hi" });
    expect((await own.post("/v1/messages", { agent_id: agentId, to_number: "+14155550132", text: "a".repeat(200) })).body.segments).toBe(2);
    expect((await own.post("/v1/messages", { agent_id: agentId, to_number: "+14155550003", text: "refunded" })).status).toBe(201);
    const usage = await own.get("/v1/usage");
    expect(usage.body.sms).toEqual({ received: 1, sent_segments: 2 });
    const spend = await own.get("/v1/billing/expenditure");
    expect(spend.body.by_category.sms).toBe("0.024500");
  });
});

describe("STOP and START", () => {
  it("a recipient who texts STOP (any case, trimmed, or a synonym) gets 409 recipient_opted_out, nothing charged; START lets texts through again", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    const them = "+14155550127";
    expect((await send({ agent_id: agentId, to_number: them, text: "Welcome" })).status).toBe(201);
    await inbound(phoneNumber, them, "  stop ");
    const before = await balance();
    const ledgerBefore = (await ledgerOf(service.core, account.accountId)).length;
    const refused = await send({ agent_id: agentId, to_number: them, text: "Still there?" });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "recipient_opted_out" });
    expect(refused.body.detail).toContain(them);
    expect(await balance()).toBe(before);
    expect(await ledgerOf(service.core, account.accountId)).toHaveLength(ledgerBefore);
    expect((await api.get("/v1/messages", { query: { agent_id: agentId } })).body.data.filter((m: any) => m.direction === "outbound")).toHaveLength(1);
    // The STOP text itself still arrives as any other.
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).toContain("sms.received");

    await inbound(phoneNumber, them, "Start");
    expect((await send({ agent_id: agentId, to_number: them, text: "Welcome back" })).status).toBe(201);
    for (const word of ["UNSUBSCRIBE", "cancel", "End", "QUIT", "stopall"]) {
      await inbound(phoneNumber, them, word);
      expect((await send({ agent_id: agentId, to_number: them, text: "?" })).status, word).toBe(409);
      await inbound(phoneNumber, them, word === "End" ? "unstop" : "yes");
      expect((await send({ agent_id: agentId, to_number: them, text: "!" })).status, word).toBe(201);
    }
  });

  it("is kept per number and recipient: a STOP to one number leaves the agent's other number, and other recipients, free", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    const other = await api.post("/v1/numbers", { agent_id: agentId });
    await inbound(phoneNumber, "+14155550128", "STOP");
    expect((await send({ agent_id: agentId, to_number: "+14155550128", text: "a" })).status).toBe(409);
    expect((await send({ agent_id: agentId, to_number: "+14155550128", text: "a", from_number: other.body.phone_number })).status).toBe(201);
    expect((await send({ agent_id: agentId, to_number: "+14155550129", text: "a" })).status).toBe(201);
  });

  it("a sentence that merely contains STOP is an ordinary text", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    await inbound(phoneNumber, "+14155550130", "Please stop by tomorrow");
    expect((await send({ agent_id: agentId, to_number: "+14155550130", text: "Will do" })).status).toBe(201);
  });
});

describe("sms.status delivery", () => {
  it("reaches a webhook (service-relay/1 and /2) as the Event envelope", async () => {
    const receiver = await startReceiver(() => 200);
    try {
      const contract = await Contract.load(service.baseUrl);
      for (const protocol of ["service-relay/1", "service-relay/2"]) {
        const { agentId } = await agentWithNumber(api);
        expect((await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, protocol })).status).toBe(201);
        const sent = await send({ agent_id: agentId, to_number: "+14155550131", text: `via ${protocol}` });
        const got = await receiver.waitFor(2, (r) => r.body?.payload?.message_id === sent.body.message_id);
        expect(got.map((r) => [messageType(r), r.body.event_type, r.body.payload.status])).toEqual([
          ["sms.status", "sms.status", "sent"],
          ["sms.status", "sms.status", "delivered"],
        ]);
        for (const r of got) contract.checkWebhook("event", r.body);
      }
    } finally {
      await receiver.close();
    }
  });
});
