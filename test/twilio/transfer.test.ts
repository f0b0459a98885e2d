import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { readRelayTwiml } from "../../harness/twilio/relay-leg.js";
import { twilioSignature } from "../../harness/twilio/signing.js";
import { expectBalanceIsLedgerSum, ledgerOf } from "../billing/support.js";
import { drainEvents } from "../support/telephony.js";
import { agentWithTwilioNumber, connectedTwilioCall, startTwilioService, type TwilioTestService, waitFor } from "../support/twilio/service.js";

// Transfer on Twilio (core/carrier/twilio, DESIGN §6b), against the stand-in playing Twilio as its
// documentation describes: the ConversationRelay session ends with `end` and `handoffData`; the
// `<Connect action>` callback answers `<Dial>` (warm: `<Number url>` whose TwiML `<Say>`s the
// whisper) with the Dial's `action` and the Number's status callback reporting how it went; a warm
// transfer that finds nobody reconnects the caller to ConversationRelay for the agent.
let env: TwilioTestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  env = await startTwilioService({ TRANSFER_TIMEOUT_MS: "20000" });
  account = await createAccount(env.service.core, undefined, { creditMicros: 100_000_000 });
  api = new Api(env.service.baseUrl, account.apiKey);
});
afterAll(() => env?.stop());

const callOf = async (callId: string) => (await api.get(`/v1/calls/${callId}`)).body;

async function eventsUntil(agentId: string, type: string, ms = 8_000) {
  const seen: any[] = [];
  await waitFor(async () => {
    seen.push(...(await drainEvents(api, agentId)));
    return seen.some((e) => e.event_type === type);
  }, ms);
  return seen;
}

describe("a transfer through Twilio", () => {
  it("cold: ends the session with handoffData, dials the person from <Connect action>, bridges, and bills the leg", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid, leg } = await connectedTwilioCall(api, env.twilio, agentId);
    await drainEvents(api, agentId);
    const res = await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155557777" });
    expect(res.status).toBe(200);
    expect(res.body.transfer_status).toBe("dialing");

    const end = await leg.ended();
    expect(JSON.parse(end.handoffData)).toEqual({ reason: "transfer", to: "+14155557777", mode: "cold" });
    const events = await eventsUntil(agentId, "call.transfer.answered");
    expect(events.map((e) => e.event_type).filter((t) => t.startsWith("call.transfer"))).toEqual(["call.transfer.started", "call.transfer.answered"]);
    await env.twilio.settled();

    // The Connect action carried the handoff, and was answered with the Dial.
    const action = env.twilio.connectActions.find((a) => a.callSid === callSid)!;
    expect(action.params.HandoffData).toBe(end.handoffData);
    expect(action.answer.status).toBe(200);
    const [dial] = env.twilio.dials.filter((d) => d.callSid === callSid);
    expect(dial).toMatchObject({
      to: "+14155557777",
      outcome: "answered",
      whisper: null,
      dial: { action: `${env.service.baseUrl}/twilio/transfer/dial?call_id=${callId}`, timeout: "20" },
      number: { statusCallback: `${env.service.baseUrl}/twilio/transfer/status?call_id=${callId}` },
    });
    expect(dial!.number.url).toBeUndefined();
    expect(await callOf(callId)).toMatchObject({ status: "in-progress", transfer_status: "bridged", transferred_to: "+14155557777" });
    expect((await ledgerOf(env.service.core, account.accountId)).filter((r) => r.callId === callId && r.item === "call.transfer")).toHaveLength(1);

    // The caller hangs up: the Dial's action hears `completed` (answered with <Hangup/>), then the call ends.
    await env.twilio.hangUp(callSid);
    await env.twilio.settled();
    expect(await callOf(callId)).toMatchObject({ status: "completed", transferred_to: "+14155557777" });
    await expectBalanceIsLedgerSum(env.service.core, account.accountId);
  });

  it("warm: the person hears the whisper from <Number url> before the bridge", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid, leg } = await connectedTwilioCall(api, env.twilio, agentId);
    const res = await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155557778", mode: "warm", whisper: "Ann & Bob, about <order> 42." });
    expect(res.status).toBe(200);
    await leg.ended();
    await eventsUntil(agentId, "call.transfer.answered");
    await env.twilio.settled();
    const [dial] = env.twilio.dials.filter((d) => d.callSid === callSid);
    expect(dial).toMatchObject({ outcome: "answered", whisper: ["Ann & Bob, about <order> 42."] });
    expect(dial!.number.url).toBe(`${env.service.baseUrl}/twilio/transfer/whisper?call_id=${callId}`);
    expect(await callOf(callId)).toMatchObject({ transfer_status: "bridged", transferred_to: "+14155557778" });
    // The agent's session is over, so hanging up a bridged call goes through Calls update.
    expect((await api.post(`/v1/calls/${callId}/hangup`)).body).toMatchObject({ status: "completed", ended_by: "agent" });
    expect(env.twilio.requestsOf("UpdateCall").at(-1)).toMatchObject({ params: { Sid: callSid }, form: { Status: "completed" } });
    await env.twilio.settled();
    expect(env.twilio.calls.get(callSid)!.status).toBe("completed");
  });

  for (const [to, reason] of [
    ["+14155550001", "busy"],
    ["+14155550002", "no-answer"],
  ] as const) {
    it(`warm, ${reason}: the Dial's action reconnects the caller to ConversationRelay, and the agent gets the turn`, async () => {
      const { agentId } = await agentWithTwilioNumber(api);
      const { callId, callSid, leg } = await connectedTwilioCall(api, env.twilio, agentId);
      await drainEvents(api, agentId);
      expect((await api.post(`/v1/calls/${callId}/transfer`, { to_number: to, mode: "warm", whisper: "A caller." })).status).toBe(200);
      await leg.ended();
      const events = await eventsUntil(agentId, "call.utterance");
      await env.twilio.settled();
      expect(events.find((e) => e.event_type === "call.transfer.failed").payload).toMatchObject({ reason, returned_to_agent: true });
      const turn = events.find((e) => e.event_type === "call.utterance");
      expect(turn.payload.text).toBe(`[transfer failed: ${reason}]`);
      // The new session: its TwiML names the failure, and the agent's answer is heard on it.
      const back = env.twilio.legs.get(callSid)!;
      expect(back).not.toBe(leg);
      expect(readRelayTwiml(env.twilio.calls.get(callSid)!.twiml!)!.parameters).toEqual({ call_id: callId, transfer_failed: reason });
      expect((await api.post(`/v1/calls/${callId}/context`, { text: "Nobody is free, sorry." }, { query: { turn_id: turn.turn_id } })).status).toBe(200);
      expect(await back.line(0)).toBe("Nobody is free, sorry.");
      expect(await callOf(callId)).toMatchObject({ status: "in-progress", transfer_status: "failed", transferred_to: null });
      back.say("OK, bye.");
      await eventsUntil(agentId, "call.utterance");
      await env.twilio.hangUp(callSid);
      await env.twilio.settled();
      expect((await callOf(callId)).status).toBe("completed");
    });
  }

  it("cold, busy: call.transfer.failed, and the caller hears a sentence before the line drops", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid, leg } = await connectedTwilioCall(api, env.twilio, agentId);
    await drainEvents(api, agentId);
    expect((await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155550001" })).status).toBe(200);
    await leg.ended();
    const events = await eventsUntil(agentId, "call.transfer.failed");
    expect(events.find((e) => e.event_type === "call.transfer.failed").payload).toMatchObject({ reason: "busy", returned_to_agent: false });
    await env.twilio.settled();
    expect(env.twilio.calls.get(callSid)!.twiml).toMatch(/<Say>[^<]*could not be reached[^<]*<\/Say><Hangup\/>/);
    await waitFor(async () => (await callOf(callId)).status === "completed");
    expect(events.some((e) => e.event_type === "call.utterance")).toBe(false);
  });

  it("refuses a transfer webhook that Twilio did not sign (403), changing nothing", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid } = await connectedTwilioCall(api, env.twilio, agentId);
    const url = `${env.service.baseUrl}/twilio/transfer/status?call_id=${callId}`;
    const params = { AccountSid: env.twilio.accountSid, CallSid: "CA" + "0".repeat(32), CallStatus: "in-progress" };
    const forged = await env.twilio.post(url, params, { signature: twilioSignature("not-the-token", url, params) });
    expect(forged.status).toBe(403);
    expect((await callOf(callId)).transfer_status).toBeNull();
    await env.twilio.hangUp(callSid);
    await env.twilio.settled();
  });

  it("makes no request to Twilio for a refused transfer (an ended call: 410)", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid, leg } = await connectedTwilioCall(api, env.twilio, agentId);
    await env.twilio.hangUp(callSid);
    await env.twilio.settled();
    const requests = env.twilio.requests.length;
    const actions = env.twilio.connectActions.length;
    const res = await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155557777" });
    expect(res.status).toBe(410);
    expect(env.twilio.requests.length).toBe(requests);
    expect(env.twilio.connectActions.length).toBe(actions);
    expect(leg.frames.some((f) => f.type === "end")).toBe(false);
  });
});
