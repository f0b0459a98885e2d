import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { readRelayTwiml } from "../../harness/twilio/relay-leg.js";
import { expectBalanceIsLedgerSum } from "../billing/support.js";
import { drainEvents } from "../support/telephony.js";
import { agentWithTwilioNumber, connectedTwilioCall, startTwilioService, type TwilioTestService, waitFor } from "../support/twilio/service.js";

let env: TwilioTestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  env = await startTwilioService();
  account = await createAccount(env.service.core, undefined, { creditMicros: 100_000_000 });
  api = new Api(env.service.baseUrl, account.apiKey);
});
afterAll(() => env?.stop());

const callOf = async (callId: string) => (await api.get(`/v1/calls/${callId}`)).body;

describe("placing a call through Twilio", () => {
  it("creates the call with ConversationRelay TwiML for the agent's voice and status callbacks naming our call", async () => {
    const { agentId, phoneNumber } = await agentWithTwilioNumber(api, { voice_id: "joanna" });
    const placed = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
    expect(placed.body).toMatchObject({ status: "queued", from_number: phoneNumber });
    const [request] = env.twilio.requestsOf("CreateCall").slice(-1);
    expect(request!.form).toMatchObject({
      To: "+14155550142",
      From: phoneNumber,
      StatusCallback: `${env.service.baseUrl}/twilio/status?call_id=${placed.body.call_id}`,
      StatusCallbackMethod: "POST",
      StatusCallbackEvent: ["initiated", "ringing", "answered", "completed"],
    });
    const relay = readRelayTwiml(String(request!.form.Twiml));
    expect(relay).toEqual({
      url: `${env.service.baseUrl.replace(/^http/, "ws")}/twilio/relay/${placed.body.call_id}`,
      action: `${env.service.baseUrl}/twilio/connect?call_id=${placed.body.call_id}`,
      attributes: expect.objectContaining({ ttsProvider: "Amazon", voice: "Joanna-Neural", language: "en-US", interruptible: "any", dtmfDetection: "true" }),
      parameters: { call_id: placed.body.call_id },
    });
    await api.post(`/v1/calls/${placed.body.call_id}/hangup`);
  });

  it.each([
    ["busy", "call.busy"],
    ["no-answer", "call.no-answer"],
    ["failed", "call.failed"],
    ["canceled", "call.canceled"],
  ] as const)("reports a %s outcome as %s, charging nothing", async (outcome, eventType) => {
    const { agentId } = await agentWithTwilioNumber(api);
    await drainEvents(api, agentId);
    const before = (await api.get("/v1/billing/balance")).body.balance;
    const callId = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550143" })).body.call_id;
    const callSid = env.twilio.lastCall().sid;
    await env.twilio.ring(callSid);
    expect((await callOf(callId)).status).toBe("ringing");
    expect((await env.twilio.finish(callSid, outcome))?.status).toBe(204);
    expect(await callOf(callId)).toMatchObject({ status: outcome, ended_by: "carrier", duration_seconds: 0, billed_seconds: 0, charge: "0.000000" });
    const events = await drainEvents(api, agentId);
    expect(events.map((e) => e.event_type)).toEqual([eventType]);
    expect((await api.get("/v1/billing/balance")).body.balance).toBe(before);
  });

  it("cancels a ringing call it hangs up through Calls update (Status=canceled)", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const callId = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550144" })).body.call_id;
    const callSid = env.twilio.lastCall().sid;
    await env.twilio.ring(callSid);
    expect((await api.post(`/v1/calls/${callId}/hangup`)).body).toMatchObject({ status: "canceled", ended_by: "agent" });
    expect(env.twilio.requestsOf("UpdateCall").at(-1)).toMatchObject({ params: { Sid: callSid }, form: { Status: "canceled" } });
    await env.twilio.settled();
    expect(env.twilio.calls.get(callSid)!.status).toBe("canceled");
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).toEqual(["call.canceled"]);
  });

  it("ends a connected call with `end` on its socket when the agent hangs up, speaking first with end_call", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid, leg } = await connectedTwilioCall(api, env.twilio, agentId);
    leg.say("That's all, thanks.");
    await waitFor(async () =>
      (await api.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data.some((e: any) => e.event_type === "call.utterance"),
    );
    const turn = (await api.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data.find((e: any) => e.event_type === "call.utterance").turn_id;
    const pushed = await api.post(`/v1/calls/${callId}/context`, { text: "Goodbye!", end_call: true }, { query: { turn_id: turn } });
    expect(pushed.body).toMatchObject({ call_ending: true });
    expect(await leg.line(0)).toBe("Goodbye!");
    expect(JSON.parse((await leg.ended()).handoffData)).toEqual({ reason: "hangup" });
    expect(leg.frames.map((f) => f.type)).toEqual(["text", "end"]);
    await env.twilio.settled();
    expect(env.twilio.calls.get(callSid)!.status).toBe("completed");
    expect(env.twilio.requestsOf("UpdateCall").filter((r) => r.params.Sid === callSid)).toEqual([]);
    expect(await callOf(callId)).toMatchObject({ status: "completed", ended_by: "agent" });
  });
});

describe("status callbacks repeated or out of order", () => {
  it("applies a duplicated completion once and settles the bill on Twilio's CallDuration", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid } = await connectedTwilioCall(api, env.twilio, agentId);
    const call = env.twilio.calls.get(callSid)!;
    call.endedAt = new Date(call.answeredAt!.getTime() + 42_000);
    call.status = "completed";
    for (let i = 0; i < 2; i++) expect((await env.twilio.statusCallback(call, "completed")).status).toBe(204);
    expect(await callOf(callId)).toMatchObject({
      status: "completed",
      ended_by: "caller",
      duration_seconds: 42,
      billed_seconds: 42,
      charge: (42 * 0.00025).toFixed(6),
    });
    const events = await drainEvents(api, agentId);
    expect(events.filter((e) => e.event_type === "call.completed")).toHaveLength(1);
    const verify = (await api.get(`/v1/billing/verify/${callId}`)).body;
    expect(verify.agrees).toBe(true);
    await expectBalanceIsLedgerSum(env.service.core, account.accountId);
  });

  it("never moves a call backwards: ringing after the answer, or anything after the end, changes nothing", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid, leg } = await connectedTwilioCall(api, env.twilio, agentId);
    const call = env.twilio.calls.get(callSid)!;
    expect((await env.twilio.statusCallback(call, "ringing")).status).toBe(204);
    expect((await callOf(callId)).status).toBe("in-progress");
    await env.twilio.hangUp(callSid);
    await leg.closed;
    const ended = await callOf(callId);
    for (const late of ["in-progress", "ringing", "busy"]) expect((await env.twilio.statusCallback(call, late)).status).toBe(204);
    expect(await callOf(callId)).toEqual(ended);
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).toEqual(["call.completed"]);
  });

  it("takes a completion that overtook the answer as a completed call of Twilio's duration", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const callId = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550145" })).body.call_id;
    const call = env.twilio.lastCall();
    call.answeredAt = new Date(Date.now() - 10_000);
    call.endedAt = new Date();
    call.status = "completed";
    expect((await env.twilio.statusCallback(call, "completed")).status).toBe(204);
    expect((await env.twilio.statusCallback(call, "in-progress")).status).toBe(204);
    expect(await callOf(callId)).toMatchObject({ status: "completed", duration_seconds: 10, billed_seconds: 10 });
    expect((await api.get(`/v1/billing/verify/${callId}`)).body.agrees).toBe(true);
  });

  it("connects a call whose socket opened before the answered callback arrived", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const callId = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550146" })).body.call_id;
    const callSid = env.twilio.lastCall().sid;
    await env.twilio.ring(callSid);
    const leg = await env.twilio.answer(callSid, { socketFirst: true });
    await waitFor(async () => (await callOf(callId)).status === "in-progress");
    leg.say("Hello from a fast socket");
    await waitFor(async () => (await drainEvents(api, agentId)).some((e) => e.event_type === "call.utterance"));
    await env.twilio.hangUp(callSid);
    await waitFor(async () => (await callOf(callId)).status === "completed");
  });
});

describe("inbound calls and texts through Twilio's webhooks", () => {
  it("answers a voice webhook retried with the same CallSid with the same call, never a second", async () => {
    const { agentId, phoneNumber } = await agentWithTwilioNumber(api);
    const first = await env.twilio.callIn({ from: "+14155550177", to: phoneNumber, connect: false });
    const again = await env.twilio.callIn({ from: "+14155550177", to: phoneNumber, callSid: first.call.sid });
    expect(again.answer.text).toBe(first.answer.text);
    const calls = (await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data;
    expect(calls).toHaveLength(1);
    expect(readRelayTwiml(first.answer.text)!.parameters.call_id).toBe(calls[0].call_id);
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).toEqual(["call.received"]);
    await env.twilio.hangUp(first.call.sid);
    await waitFor(async () => (await callOf(calls[0].call_id)).status === "completed");
  });

  it("turns away a call to a released number politely (Say, then Hangup)", async () => {
    const { numberId, phoneNumber } = await agentWithTwilioNumber(api);
    const held = [...env.twilio.numbers.values()].find((n) => n.phoneNumber === phoneNumber)!;
    expect((await api.post(`/v1/numbers/${numberId}/release`)).status).toBe(200);
    env.twilio.numbers.set(held.sid, held); // Twilio routes one more call before the release lands
    const { answer, leg } = await env.twilio.callIn({ from: "+14155550177", to: phoneNumber });
    expect(leg).toBeNull();
    expect(answer.text).toMatch(
      /^<\?xml version="1.0" encoding="UTF-8"\?><Response><Say>The number you have dialed is not in service\. Goodbye\.<\/Say><Hangup\/><\/Response>$/,
    );
    env.twilio.numbers.delete(held.sid);
  });

  it("stores a text retried with the same MessageSid once, charged once", async () => {
    const { agentId, phoneNumber } = await agentWithTwilioNumber(api);
    await drainEvents(api, agentId);
    const before = (await api.get("/v1/billing/balance")).body.balance;
    const sent = { from: "+14155550166", to: phoneNumber, body: "Your code is 424242", messageSid: "SM" + "a".repeat(32) };
    for (let i = 0; i < 3; i++) {
      const answer = await env.twilio.textIn(sent);
      expect(answer).toEqual({ status: 200, text: '<?xml version="1.0" encoding="UTF-8"?><Response/>' });
    }
    expect((await api.get("/v1/messages", { query: { agent_id: agentId } })).body.data.map((m: any) => m.text)).toEqual(["Your code is 424242"]);
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).toEqual(["sms.received"]);
    expect(Number((await api.get("/v1/billing/balance")).body.balance)).toBeCloseTo(Number(before) - 0.0079, 6);
  });

  it("logs ConversationRelay errors on the call and keeps taking turns", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid, leg } = await connectedTwilioCall(api, env.twilio, agentId);
    leg.error("Invalid message received: missing token");
    leg.send({ type: "info", name: "heartbeat" });
    leg.say("Still there?");
    await waitFor(async () => (await api.get(`/v1/calls/${callId}/transcript`)).body.length === 1);
    await env.twilio.hangUp(callSid);
  });
});
