import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerEntries } from "../../core/db/schema/ledger-entries.js";
import { recordings } from "../../core/db/schema/recordings.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { readRelayTwiml } from "../../harness/twilio/relay-leg.js";
import { drainEvents } from "../support/telephony.js";
import { agentWithTwilioNumber, startTwilioService, type TwilioTestService, waitFor } from "../support/twilio/service.js";

// Voicemail (answering machine detection) and recording on the Twilio carrier, against the
// stand-in: Calls create with MachineDetection/AsyncAmd and its signed callback; the recording
// notice as <Say> before <Connect>, the recording started at the relay's setup, its status
// callback, the media proxied by the service, and its deletion at Twilio.
const NOTICE = "This call is recorded for quality.";
let env: TwilioTestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  env = await startTwilioService({ RECORDING_NOTICE: NOTICE });
  account = await createAccount(env.service.core, undefined, { creditMicros: 100_000_000 });
  api = new Api(env.service.baseUrl, account.apiKey);
});
afterAll(() => env?.stop());

const callOf = async (callId: string) => (await api.get(`/v1/calls/${callId}`)).body;

/** A call placed with `body`, rung and answered at the stand-in: its ids and relay leg. */
async function answered(agentId: string, body: Record<string, unknown>, to = "+14155550142") {
  const placed = await api.post("/v1/calls", { agent_id: agentId, to_number: to, ...body });
  expect(placed.status).toBe(201);
  const callSid = env.twilio.lastCall().sid;
  await env.twilio.ring(callSid);
  const leg = await env.twilio.answer(callSid);
  await waitFor(async () => (await callOf(placed.body.call_id)).status === "in-progress");
  return { callId: placed.body.call_id as string, callSid, leg, request: env.twilio.requestsOf("CreateCall").at(-1)! };
}

describe("answering machine detection", () => {
  it("asks Twilio for async DetectMessageEnd with a callback naming our call; none without machine_detection", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid, request } = await answered(agentId, { machine_detection: "detect" });
    expect(request.form).toMatchObject({
      MachineDetection: "DetectMessageEnd",
      AsyncAmd: "true",
      AsyncAmdStatusCallback: `${env.service.baseUrl}/twilio/amd?call_id=${callId}`,
      AsyncAmdStatusCallbackMethod: "POST",
    });
    await env.twilio.hangUp(callSid);
    const plain = await answered(agentId, {});
    expect(plain.request.form.MachineDetection).toBeUndefined();
    expect(plain.request.form.AsyncAmd).toBeUndefined();
    await env.twilio.hangUp(plain.callSid);
  });

  it.each([
    ["human", "human"],
    ["machine_start", "machine"],
    ["machine_end_beep", "machine"],
    ["machine_end_silence", "machine"],
    ["machine_end_other", "machine"],
    ["fax", "fax"],
    ["unknown", "unknown"],
  ])("AnsweredBy %s is call.answered_by %s; the call goes on with detect", async (twilioValue, ours) => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid, leg } = await answered(agentId, { machine_detection: "detect" });
    await drainEvents(api, agentId);
    expect((await env.twilio.amdVerdict(callSid, twilioValue)).status).toBe(204);
    expect(await callOf(callId)).toMatchObject({ status: "in-progress", answered_by: ours, voicemail_left: false });
    const events = await drainEvents(api, agentId);
    expect(events.map((e) => [e.event_type, e.payload.answered_by])).toEqual([["call.answered_by", ours]]);
    expect(leg.frames).toEqual([]);
    await env.twilio.hangUp(callSid);
  });

  it("leave_message on a machine: the message is spoken over the relay after the beep, then the call ends", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const message = "Hello, this is Sam from the garage: your car is ready.";
    const { callId, callSid, leg } = await answered(agentId, { machine_detection: "leave_message", voicemail_message: message });
    await drainEvents(api, agentId);
    expect((await env.twilio.amdVerdict(callSid, "machine_end_beep")).status).toBe(204);
    expect(await leg.line(0)).toBe(message);
    await leg.ended();
    expect(leg.frames.map((f) => f.type)).toEqual(["text", "end"]);
    await waitFor(async () => (await callOf(callId)).status === "completed");
    expect(await callOf(callId)).toMatchObject({ answered_by: "machine", voicemail_left: true, ended_by: "agent" });
    await env.twilio.settled();
    const events = await drainEvents(api, agentId);
    expect(events.map((e) => e.event_type)).toEqual(["call.answered_by", "call.completed"]);
    expect(events[0].payload).toMatchObject({ answered_by: "machine", voicemail_left: true });
    expect(events[1].payload).toMatchObject({ answered_by: "machine", voicemail_left: true });
  });

  it("leave_message and a person: nothing is said, the call goes on", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid, leg } = await answered(agentId, { machine_detection: "leave_message", voicemail_message: "Call us back." });
    await env.twilio.amdVerdict(callSid, "human");
    expect(await callOf(callId)).toMatchObject({ status: "in-progress", answered_by: "human", voicemail_left: false });
    expect(leg.frames).toEqual([]);
    await env.twilio.hangUp(callSid);
  });

  it("detect: a person who speaks before the verdict is heard after it, so call.answered_by comes first", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callSid, leg } = await answered(agentId, { machine_detection: "detect" });
    await drainEvents(api, agentId);
    leg.say("Hello, who is this?");
    // The turn is held: nothing reaches the agent while Twilio is still deciding.
    await new Promise((r) => setTimeout(r, 500));
    expect(await drainEvents(api, agentId)).toEqual([]);
    expect((await env.twilio.amdVerdict(callSid, "human")).status).toBe(204);
    const events: any[] = [];
    await waitFor(async () => {
      events.push(...(await drainEvents(api, agentId)));
      return events.some((e) => e.event_type === "call.utterance");
    });
    expect(events.map((e) => e.event_type)).toEqual(["call.answered_by", "call.utterance"]);
    expect(events[1].payload.text).toBe("Hello, who is this?");
    await env.twilio.hangUp(callSid);
  });

  it("leave_message without voicemail_message: 422, and Twilio is not asked", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const creates = env.twilio.requestsOf("CreateCall").length;
    const res = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142", machine_detection: "leave_message" });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: any) => e.field)).toEqual(["voicemail_message"]);
    expect(env.twilio.requestsOf("CreateCall").length).toBe(creates);
    expect((await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data).toEqual([]);
  });

  it("a forged or replayed verdict: 403 for a bad signature, and a repeat changes nothing", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid } = await answered(agentId, { machine_detection: "detect" });
    const call = env.twilio.lastCall();
    const forged = await env.twilio.post(
      call.asyncAmdStatusCallback!,
      { AccountSid: env.twilio.accountSid, CallSid: callSid, AnsweredBy: "machine_end_beep" },
      { signature: "bm90IGEgc2lnbmF0dXJl" },
    );
    expect(forged.status).toBe(403);
    expect((await callOf(callId)).answered_by).toBeNull();
    await env.twilio.amdVerdict(callSid, "human");
    await env.twilio.amdVerdict(callSid, "machine_end_beep");
    expect((await callOf(callId)).answered_by).toBe("human");
    expect((await drainEvents(api, agentId)).filter((e) => e.event_type === "call.answered_by")).toHaveLength(1);
    await env.twilio.hangUp(callSid);
  });
});

describe("recording", () => {
  it("says the notice before connecting, records from the relay's setup (dual channel), and reports it ready", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const placed = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142", record: true });
    const request = env.twilio.requestsOf("CreateCall").at(-1)!;
    const twiml = String(request.form.Twiml);
    expect(twiml).toMatch(new RegExp(`<Response><Say>${NOTICE}</Say><Connect[ >]`));
    expect(readRelayTwiml(twiml)?.parameters).toEqual({ call_id: placed.body.call_id });
    const callSid = env.twilio.lastCall().sid;
    await env.twilio.ring(callSid);
    expect(env.twilio.recordingsOf(callSid)).toEqual([]);
    await env.twilio.answer(callSid);
    await waitFor(() => env.twilio.recordingsOf(callSid).length === 1);
    const [started] = env.twilio.requestsOf("CreateCallRecording").slice(-1);
    expect(started!.params.CallSid).toBe(callSid);
    expect(started!.form).toMatchObject({
      RecordingChannels: "dual",
      RecordingStatusCallback: `${env.service.baseUrl}/twilio/recording?call_id=${placed.body.call_id}`,
      RecordingStatusCallbackMethod: "POST",
      RecordingStatusCallbackEvent: "completed",
    });
    await drainEvents(api, agentId);
    await env.twilio.hangUp(callSid);
    await env.twilio.settled();
    const events = await drainEvents(api, agentId);
    const ready = events.find((e) => e.event_type === "call.recording.ready");
    expect(ready.payload).toMatchObject({ call_id: placed.body.call_id, recording_id: expect.stringMatching(/^rec_/), duration_s: expect.any(Number) });
    expect(JSON.stringify(events)).not.toContain(env.twilio.url);
    expect(JSON.stringify(events)).not.toMatch(/RE[0-9a-f]{32}/);
    // Twilio retrying the callback: still one recording, charged once.
    const recording = env.twilio.recordingsOf(callSid)[0]!;
    const replay = await env.twilio.post(recording.statusCallback!, {
      AccountSid: env.twilio.accountSid,
      CallSid: callSid,
      RecordingSid: recording.sid,
      RecordingStatus: "completed",
      RecordingDuration: String(recording.duration),
    });
    expect(replay.status).toBe(204);
    const charged = await env.service.core.db.select().from(ledgerEntries).where(eq(ledgerEntries.callId, placed.body.call_id));
    expect(charged.filter((r) => r.category === "recording")).toHaveLength(1);
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).toEqual([]);
  });

  it("serves the audio through the service (Twilio's credentials stay with it), deletes it at Twilio, then 404", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid } = await answered(agentId, { record: true });
    await waitFor(() => env.twilio.recordingsOf(callSid).length === 1);
    const recordingSid = env.twilio.recordingsOf(callSid)[0]!.sid;
    await env.twilio.hangUp(callSid);
    await env.twilio.settled();
    await waitFor(async () => (await env.service.core.db.select().from(recordings).where(eq(recordings.callId, callId))).length === 1);

    const res = await fetch(`${env.service.baseUrl}/v1/calls/${callId}/recording`, { headers: { authorization: `Bearer ${account.apiKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("audio/wav");
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.subarray(0, 4).toString("ascii")).toBe("RIFF");
    expect(bytes.subarray(8, 12).toString("ascii")).toBe("WAVE");
    expect([...res.headers.values()].join(" ")).not.toMatch(/twilio|127\.0\.0\.1:\d+\/2010/i);
    expect(env.twilio.requestsOf("FetchRecordingMedia").at(-1)!.params.Sid).toBe(recordingSid);

    const other = new Api(env.service.baseUrl, (await createAccount(env.service.core)).apiKey);
    const before = { deletes: env.twilio.requestsOf("DeleteRecording").length, media: env.twilio.requestsOf("FetchRecordingMedia").length };
    expect((await other.delete(`/v1/calls/${callId}/recording`)).status).toBe(404);
    expect((await other.get(`/v1/calls/${callId}/recording`)).status).toBe(404);
    expect(env.twilio.recordings.has(recordingSid)).toBe(true);
    expect(env.twilio.requestsOf("DeleteRecording").length).toBe(before.deletes);
    expect(env.twilio.requestsOf("FetchRecordingMedia").length).toBe(before.media);

    const deletes = env.twilio.requestsOf("DeleteRecording").length;
    expect((await api.delete(`/v1/calls/${callId}/recording`)).status).toBe(204);
    expect(
      env.twilio
        .requestsOf("DeleteRecording")
        .slice(deletes)
        .map((r) => r.params.Sid),
    ).toEqual([recordingSid]);
    expect(env.twilio.recordings.has(recordingSid)).toBe(false);
    const after = await fetch(`${env.service.baseUrl}/v1/calls/${callId}/recording`, { headers: { authorization: `Bearer ${account.apiKey}` } });
    expect(after.status).toBe(404);
  });

  it("Twilio failing the download is a 502, with the recording kept", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid } = await answered(agentId, { record: true });
    await waitFor(() => env.twilio.recordingsOf(callSid).length === 1);
    await env.twilio.hangUp(callSid);
    await env.twilio.settled();
    await waitFor(async () => (await env.service.core.db.select().from(recordings).where(eq(recordings.callId, callId))).length === 1);
    // The recording vanished at Twilio behind the service's back: its media answers 404.
    env.twilio.recordings.clear();
    const res = await api.get(`/v1/calls/${callId}/recording`);
    expect(res.status).toBe(502);
    expect(res.body.code).toBe("carrier_unavailable");
  });

  it("a forged recording callback is a 403 and records nothing", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid } = await answered(agentId, { record: true });
    const forged = await env.twilio.post(
      `${env.service.baseUrl}/twilio/recording?call_id=${callId}`,
      { AccountSid: env.twilio.accountSid, CallSid: callSid, RecordingSid: `RE${"0".repeat(32)}`, RecordingStatus: "completed", RecordingDuration: "5" },
      { signature: "bm90IGEgc2lnbmF0dXJl" },
    );
    expect(forged.status).toBe(403);
    expect(await env.service.core.db.select().from(recordings).where(eq(recordings.callId, callId))).toEqual([]);
    await env.twilio.hangUp(callSid);
  });

  it("inbound calls to a number with record_inbound hear the notice first and are recorded", async () => {
    const { agentId, numberId, phoneNumber } = await agentWithTwilioNumber(api);
    expect((await api.patch(`/v1/numbers/${numberId}`, { record_inbound: true })).body.record_inbound).toBe(true);
    const { answer, call } = await env.twilio.callIn({ from: "+14155550177", to: phoneNumber });
    expect(answer.text).toMatch(new RegExp(`<Say>${NOTICE}</Say><Connect[ >]`));
    await waitFor(() => env.twilio.recordingsOf(call.sid).length === 1);
    await drainEvents(api, agentId);
    await env.twilio.hangUp(call.sid);
    await env.twilio.settled();
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).toContain("call.recording.ready");
  });
});
