import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { placeCall } from "../../core/calls/place-call.js";
import { listCalls } from "../../core/calls/read-calls.js";
import { CarrierRefusal, CarrierUnavailable } from "../../core/carrier/carrier.js";
import { numbers } from "../../core/db/schema/numbers.js";
import { resolveVoiceId } from "../../core/voices/account-voice.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { coreWithCarrier } from "../support/failing-carrier.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall, drainEvents } from "../support/telephony.js";

// Placing, finding, hanging up and receiving calls through the API (core/calls/place-call.ts,
// read-calls.ts), and what deleting an agent does to its calls. Carrier failures are made by
// standing in for the carrier's placeCall (the boundary to Twilio) for one request; the service's
// own code runs as it is. A call arriving as a carrier reports it: inbound-call.test.ts.
let service: TestService;
let account: TestAccount;
let api: Api;
const realPlaceCall = { fn: undefined as unknown };

beforeAll(async () => {
  service = await startTestService();
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
  realPlaceCall.fn = service.core.carrier.placeCall;
});
afterAll(() => service?.stop());
afterEach(() => {
  service.core.carrier.placeCall = realPlaceCall.fn as typeof service.core.carrier.placeCall;
});

describe("placing calls", () => {
  it("answers 400 with the no-number message when the agent has no active number", async () => {
    const agent = (await api.post("/v1/agents", { name: "No number" })).body.agent_id;
    const res = await api.post("/v1/calls", { agent_id: agent, to_number: "+14155550142" });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("no_active_number");
    expect(res.body.detail).toMatch(/has no active phone number/);
  });

  it("validates the body and refuses another account's agent", async () => {
    const bad = await api.post("/v1/calls", { agent_id: "x", to_number: "555-0142" });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: any) => e.field)).toEqual(["to_number"]);
    expect((await api.post("/v1/calls", { to_number: "+14155550142" })).body.errors.map((e: any) => e.field)).toEqual(["agent_id"]);
    expect((await api.post("/v1/calls", { agent_id: "agt_00000000000000000000000000", to_number: "+14155550142" })).status).toBe(404);
  });

  it("connects at once and records the call's details", async () => {
    const { agentId, numberId, phoneNumber } = await agentWithNumber(api);
    const res = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
    expect(res.body).toMatchObject({
      agent_id: agentId,
      number_id: numberId,
      direction: "outbound",
      from_number: phoneNumber,
      to_number: "+14155550142",
      status: "in-progress",
      is_owner_call: false,
      ended_by: null,
      ended_at: null,
      duration_seconds: null,
    });
    expect(res.body.answered_at).not.toBeNull();
    expect((await api.get(`/v1/calls/${res.body.call_id}`)).body).toEqual(res.body);
  });

  it.each([
    ["+14155550001", "busy", "call.busy"],
    ["+14155550002", "no-answer", "call.no-answer"],
    ["+14155550003", "failed", "call.failed"],
  ])("a call to %s ends %s with %s", async (to, status, eventType) => {
    const { agentId } = await agentWithNumber(api);
    const res = await api.post("/v1/calls", { agent_id: agentId, to_number: to });
    expect(res.body).toMatchObject({ status, ended_by: "carrier", answered_at: null, duration_seconds: 0 });
    const events = await drainEvents(api, agentId);
    expect(events.map((e) => e.event_type)).toEqual([eventType]);
    expect(events[0].payload).toMatchObject({ call_id: res.body.call_id, status, direction: "outbound", to_number: to });
  });

  it("hangs up a call in progress: completed, call.completed, and hanging up again changes nothing", async () => {
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    const hung = await api.post(`/v1/calls/${callId}/hangup`);
    expect(hung.status).toBe(200);
    expect(hung.body).toMatchObject({ status: "completed", ended_by: "agent" });
    expect(hung.body.duration_seconds).toBeGreaterThanOrEqual(0);
    const events = await drainEvents(api, agentId);
    expect(events.map((e) => e.event_type)).toEqual(["call.completed"]);
    expect(events[0].payload).toMatchObject({ call_id: callId, ended_by: "agent", transcript_url: `${service.baseUrl}/v1/calls/${callId}/transcript` });
    const again = await api.post(`/v1/calls/${callId}/hangup`);
    expect(again.body).toEqual(hung.body);
    expect(await drainEvents(api, agentId)).toEqual([]);
  });

  it("hangs up a call that is still ringing: canceled, call.canceled", async () => {
    const { agentId } = await agentWithNumber(api);
    const ringing = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550005" });
    expect(ringing.body.status).toBe("ringing");
    const hung = await api.post(`/v1/calls/${ringing.body.call_id}/hangup`);
    expect(hung.body).toMatchObject({ status: "canceled", ended_by: "agent", answered_at: null });
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).toEqual(["call.canceled"]);
  });

  it("lists calls newest first, filtered by agent and status", async () => {
    const { agentId } = await agentWithNumber(api);
    const first = await answeredCall(api, agentId);
    const busy = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550001" })).body.call_id;
    const all = await api.get("/v1/calls", { query: { agent_id: agentId } });
    expect(all.body.data.map((c: any) => c.call_id)).toEqual([busy, first]);
    const onlyBusy = await api.get("/v1/calls", { query: { agent_id: agentId, status: "busy" } });
    expect(onlyBusy.body.data.map((c: any) => c.call_id)).toEqual([busy]);
    expect((await api.get("/v1/calls", { query: { status: "ringing-ish" } })).status).toBe(422);
    expect((await api.get("/v1/calls", { query: { agent_id: agentId, limit: 1 } })).body).toMatchObject({ has_more: true, limit: 1 });
  });

  it("records the voice in effect: the agent's, else the account default, else the system's", async () => {
    const { body: voices } = await api.get("/v1/voices", { query: { limit: 100 } });
    const [v1, v2] = voices.data.map((v: any) => v.voice_id).filter((id: string) => id !== voices.data[0].voice_id);
    const system = await resolveVoiceId(service.core.db, account.accountId, null);
    const plain = await agentWithNumber(api);
    expect((await api.post("/v1/calls", { agent_id: plain.agentId, to_number: "+14155550142" })).body.voice_id).toBe(system);
    await api.patch("/v1/account/voice", { voice_id: v1 });
    expect((await api.post("/v1/calls", { agent_id: plain.agentId, to_number: "+14155550142" })).body.voice_id).toBe(v1);
    const voiced = await agentWithNumber(api, { voice_id: v2 });
    expect((await api.post("/v1/calls", { agent_id: voiced.agentId, to_number: "+14155550142" })).body.voice_id).toBe(v2);
    await api.delete("/v1/account/voice");
  });
});

describe("placing a call", () => {
  it("gives the call an id with the call_ prefix", async () => {
    const { agentId } = await agentWithNumber(api);
    expect(await answeredCall(api, agentId)).toMatch(/^call_[0-9a-z]{26}$/);
  });

  it("records a call the carrier failed on unexpectedly as failed by the carrier, and tells the agent", async () => {
    const { agentId } = await agentWithNumber(api);
    service.core.carrier.placeCall = async () => {
      throw new TypeError("Cannot read properties of undefined (reading 'sid')");
    };
    const res = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: "failed", ended_by: "carrier", answered_at: null, duration_seconds: 0 });
    expect((await drainEvents(api, agentId)).map((e) => [e.event_type, e.payload.call_id])).toEqual([["call.failed", res.body.call_id]]);
  });

  it("keeps a call the carrier reported on before failing to answer the request: it was placed after all", async () => {
    const { agentId } = await agentWithNumber(api);
    service.core.carrier.placeCall = async (call) => {
      await service.core.callEngine.callStatus(call.callId, "ringing");
      throw new CarrierUnavailable("Twilio did not answer creating the call (ETIMEDOUT)");
    };
    const res = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: "ringing" });
    expect((await api.get(`/v1/calls/${res.body.call_id}`)).body.status).toBe("ringing");
  });

  it("answers a carrier's refusal that names no field with a 422 naming to_number, and leaves no call", async () => {
    const { agentId } = await agentWithNumber(api);
    service.core.carrier.placeCall = async () => {
      throw new CarrierRefusal("invalid_number", "the number cannot be dialed");
    };
    const res = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
    expect(res.status).toBe(422);
    expect(res.body.errors).toMatchObject([{ field: "to_number", message: "the number cannot be dialed" }]);
    expect((await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data).toEqual([]);
  });

  it("logs the carrier's unexpected failure with the call's id", async () => {
    const { core, logged } = coreWithCarrier(service.core, { placeCall: () => Promise.reject(new TypeError("no sid")) });
    const { agentId } = await agentWithNumber(api);
    const call = await placeCall(core, account.accountId, { agent_id: agentId, to_number: "+14155550142" });
    expect(call.status).toBe("failed");
    expect(logged).toEqual([["error", { err: expect.any(TypeError), call_id: call.call_id }, "carrier refused the call"]]);
  });

  it("leaves no call when the carrier could not be reached and never reported on it", async () => {
    const { agentId } = await agentWithNumber(api);
    service.core.carrier.placeCall = async () => {
      throw new CarrierUnavailable("Twilio did not answer creating the call (ETIMEDOUT)");
    };
    const res = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
    expect(res.status).toBe(502);
    expect((await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data).toEqual([]);
  });
});

describe("finding calls", () => {
  it("answers 404 naming the call for an unknown call id", async () => {
    const res = await api.get("/v1/calls/call_00000000000000000000000000");
    expect(res.status).toBe(404);
    expect(res.body.detail).toBe('No call with id "call_00000000000000000000000000" exists on this account.');
  });

  it("lists the account's calls when no agent is named, and answers 404 for an agent that is not the account's", async () => {
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    const page = await listCalls(service.core, account.accountId, { limit: 100, offset: 0 });
    expect(page.data.map((c) => c.call_id)).toContain(callId);
    const stranger = await createAccount(service.core);
    await expect(listCalls(service.core, stranger.accountId, { limit: 100, offset: 0, agent_id: agentId })).rejects.toMatchObject({ code: "not_found" });
  });
});

describe("inbound calls", () => {
  it("from the owner: call.received with is_owner_call, then call.owner_task with what the owner said", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api, { owner_number: "+14155550111" });
    const ring = await api.post("/v1/sandbox/inbound/calls", { to_number: phoneNumber, from_number: "+14155550111" });
    expect(ring.status).toBe(201);
    const callId = ring.body.call_id;
    expect((await api.get(`/v1/calls/${callId}`)).body).toMatchObject({
      direction: "inbound",
      is_owner_call: true,
      status: "in-progress",
      from_number: "+14155550111",
      to_number: phoneNumber,
    });
    await api.post(`/v1/sandbox/calls/${callId}/say`, { text: "Book a table for four at eight." });
    await api.post(`/v1/sandbox/calls/${callId}/say`, { text: "And text me the confirmation." });
    await api.post(`/v1/sandbox/calls/${callId}/hangup`);
    const events = await drainEvents(api, agentId);
    expect(events.map((e) => e.event_type)).toEqual(["call.received", "call.utterance", "call.utterance", "call.completed", "call.owner_task"]);
    expect(events[0].payload).toMatchObject({ call_id: callId, is_owner_call: true, from_number: "+14155550111" });
    expect(events[4].payload).toMatchObject({ call_id: callId, instructions: ["Book a table for four at eight.", "And text me the confirmation."] });
    expect(events[3].payload.ended_by).toBe("caller");
  });

  it("from a stranger: is_owner_call false and no task", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api, { owner_number: "+14155550111" });
    const { body } = await api.post("/v1/sandbox/inbound/calls", { to_number: phoneNumber, from_number: "+14155550122" });
    await api.post(`/v1/sandbox/calls/${body.call_id}/say`, { text: "Book a table for four at eight." });
    await api.post(`/v1/sandbox/calls/${body.call_id}/hangup`);
    const events = await drainEvents(api, agentId);
    expect(events.map((e) => e.event_type)).toEqual(["call.received", "call.utterance", "call.completed"]);
    expect(events[0].payload.is_owner_call).toBe(false);
  });

  it("answers 404 for a number that is not the account's and 409 for one of its numbers released", async () => {
    const { numberId, phoneNumber } = await agentWithNumber(api);
    // A sandbox number nobody here holds (numbers are drawn at random from the same 555-01xx range).
    const held = new Set((await service.core.db.select({ e164: numbers.phoneNumber }).from(numbers)).map((n) => n.e164));
    const unheld = Array.from({ length: 100 }, (_, i) => `+1415555${String(100 + i).padStart(4, "0")}`).find((n) => !held.has(n))!;
    expect((await api.post("/v1/sandbox/inbound/calls", { to_number: unheld, from_number: "+14155550122" })).status).toBe(404);
    await api.post(`/v1/numbers/${numberId}/release`);
    expect((await api.post("/v1/sandbox/inbound/calls", { to_number: phoneNumber, from_number: "+14155550122" })).status).toBe(404);
  });
});

describe("deleting an agent", () => {
  it("deletes its calls, turns, transcripts and messages, ending live calls first", async () => {
    const { agentId, phoneNumber, numberId } = await agentWithNumber(api);
    const live = await answeredCall(api, agentId);
    const phone = await Softphone.connect(service.baseUrl, live, account.apiKey);
    await api.post(`/v1/sandbox/calls/${live}/say`, { text: "hello" });
    await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550133", text: "hi" });
    expect((await api.delete(`/v1/agents/${agentId}`)).status).toBe(200);
    // The caller on the live call was hung up on, not left talking to nobody.
    await phone.next((f) => f.type === "status" && f.status === "completed");
    expect((await phone.closed).code).toBe(1000);
    expect((await api.get(`/v1/calls/${live}`)).status).toBe(404);
    expect((await api.get(`/v1/calls/${live}/transcript`)).status).toBe(404);
    expect((await api.get("/v1/messages")).body.data.filter((m: any) => m.agent_id === agentId)).toEqual([]);
    expect((await api.get(`/v1/numbers/${numberId}`)).body.agent_id).toBeNull();
  });
});
