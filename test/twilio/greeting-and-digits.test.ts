import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { readRelayTwiml } from "../../harness/twilio/relay-leg.js";
import { drainEvents } from "../support/telephony.js";
import { transcriptLines } from "../support/turns.js";
import { agentWithTwilioNumber, connectedTwilioCall, startTwilioService, type TwilioTestService, waitFor } from "../support/twilio/service.js";

// Speaking first and keypad digits on the Twilio carrier, against the stand-in: the greeting as
// ConversationRelay's welcomeGreeting in the TwiML (inbound, from the agent; outbound, from the
// placed call), from_number as the call's From; an unprompted line as a `text` token; digits as
// ConversationRelay's `sendDigits` message, and no Twilio request for a refusal.
let env: TwilioTestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  env = await startTwilioService();
  account = await createAccount(env.service.core, undefined, { creditMicros: 100_000_000 });
  api = new Api(env.service.baseUrl, account.apiKey);
});
afterAll(() => env?.stop());

describe("greetings through Twilio", () => {
  it("answers an inbound call with the agent's greeting as welcomeGreeting; the caller hears it first and it is the transcript's first line", async () => {
    const { agentId, phoneNumber } = await agentWithTwilioNumber(api, { greeting: "Thanks for calling Acme & Sons. How can I help?" });
    const { answer, call, leg } = await env.twilio.callIn({ from: "+14155550171", to: phoneNumber });
    expect(answer.status).toBe(200);
    const relay = readRelayTwiml(answer.text)!;
    expect(relay.attributes.welcomeGreeting).toBe("Thanks for calling Acme & Sons. How can I help?");
    expect(leg!.lines[0]).toBe("Thanks for calling Acme & Sons. How can I help?");
    const callId = relay.parameters.call_id!;
    expect(await transcriptLines(api, callId)).toEqual([["assistant", "Thanks for calling Acme & Sons. How can I help?"]]);
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).toEqual(["call.received"]);
    // The service does not speak it again on the socket: Twilio plays it.
    await new Promise((r) => setTimeout(r, 150));
    expect(leg!.frames.filter((f) => f.type === "text")).toEqual([]);
    await env.twilio.hangUp(call.sid);
  });

  it("has no welcomeGreeting for an agent without one", async () => {
    const { phoneNumber } = await agentWithTwilioNumber(api);
    const { answer, call, leg } = await env.twilio.callIn({ from: "+14155550172", to: phoneNumber });
    expect(readRelayTwiml(answer.text)!.attributes).not.toHaveProperty("welcomeGreeting");
    expect(leg!.lines).toEqual([]);
    await env.twilio.hangUp(call.sid);
  });

  it("places a call from the named number with the call's greeting as welcomeGreeting, recorded once answered", async () => {
    const { agentId } = await agentWithTwilioNumber(api, { greeting: "Not this one." });
    const second = (await api.post("/v1/numbers", { agent_id: agentId })).body.phone_number;
    const placed = await api.post("/v1/calls", {
      agent_id: agentId,
      to_number: "+14155550173",
      from_number: second,
      greeting: "Hi, it's Acme about your order.",
    });
    expect(placed.status).toBe(201);
    expect(placed.body.from_number).toBe(second);
    const request = env.twilio.requestsOf("CreateCall").at(-1)!;
    expect(request.form.From).toBe(second);
    expect(readRelayTwiml(String(request.form.Twiml))!.attributes.welcomeGreeting).toBe("Hi, it's Acme about your order.");
    // Not recorded before the answer.
    expect(await transcriptLines(api, placed.body.call_id)).toEqual([]);
    const callSid = env.twilio.lastCall().sid;
    await env.twilio.ring(callSid);
    const leg = await env.twilio.answer(callSid);
    expect(leg.lines[0]).toBe("Hi, it's Acme about your order.");
    await waitFor(async () => (await transcriptLines(api, placed.body.call_id)).length === 1);
    expect(await transcriptLines(api, placed.body.call_id)).toEqual([["assistant", "Hi, it's Acme about your order."]]);
    await env.twilio.hangUp(callSid);
  });

  it("refuses a from_number that is not the agent's before asking Twilio", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { phoneNumber: otherAgents } = await agentWithTwilioNumber(api);
    const creates = env.twilio.requestsOf("CreateCall").length;
    const refused = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550174", from_number: otherAgents });
    expect(refused.status).toBe(422);
    expect(refused.body.errors.map((e: any) => e.field)).toEqual(["from_number"]);
    expect(env.twilio.requestsOf("CreateCall").length).toBe(creates);
  });
});

describe("an unprompted line through Twilio", () => {
  it("is a text token with last: true on the socket", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid, leg } = await connectedTwilioCall(api, env.twilio, agentId);
    expect((await api.post(`/v1/calls/${callId}/say`, { text: "Are you still there?" })).status).toBe(200);
    expect(await leg.line(0)).toBe("Are you still there?");
    expect(leg.frames.filter((f) => f.type === "text")).toEqual([{ type: "text", token: "Are you still there?", last: true }]);
    expect((await api.post(`/v1/calls/${callId}/say`, { text: "Bye now.", end_call: true })).status).toBe(200);
    expect(await leg.line(1)).toBe("Bye now.");
    await leg.ended();
    await env.twilio.settled();
    expect(env.twilio.calls.get(callSid)!.status).toBe("completed");
  });
});

describe("digits through Twilio", () => {
  it("are ConversationRelay's sendDigits message on the call's socket, as Twilio documents it", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid, leg } = await connectedTwilioCall(api, env.twilio, agentId);
    const requests = env.twilio.requests.length;
    expect((await api.post(`/v1/calls/${callId}/digits`, { digits: "1ww2#" })).status).toBe(200);
    expect(await leg.digitsSent(0)).toBe("1ww2#");
    expect(leg.frames.filter((f) => f.type === "sendDigits")).toEqual([{ type: "sendDigits", digits: "1ww2#" }]);
    expect(leg.refusedDigits).toEqual([]);
    // Over the socket only: no REST request.
    expect(env.twilio.requests.length).toBe(requests);
    await env.twilio.hangUp(callSid);
  });

  it("refused on an ended call (410) or with a bad key (422), sending nothing", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid, leg } = await connectedTwilioCall(api, env.twilio, agentId);
    expect((await api.post(`/v1/calls/${callId}/digits`, { digits: "1x" })).status).toBe(422);
    await env.twilio.hangUp(callSid);
    await waitFor(async () => (await api.get(`/v1/calls/${callId}`)).body.status === "completed");
    expect((await api.post(`/v1/calls/${callId}/digits`, { digits: "1" })).status).toBe(410);
    expect(leg.frames.filter((f) => f.type === "sendDigits")).toEqual([]);
  });
});
