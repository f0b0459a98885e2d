import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyAnsweredBy, CALL_ANSWERED_BY_CHANNEL } from "../../core/calls/voicemail.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { Contract } from "../../harness/contract.js";
import { coreWithBusDown } from "../support/failing-bus.js";
import { messageType } from "../support/protocol2.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber, drainEvents } from "../support/telephony.js";

// Machine detection on outbound sandbox calls (core/calls/voicemail.ts): a number ending 0004 is a
// voicemail box, any other answered number a person. call.answered_by comes before any turn; with
// leave_message a machine gets the message and the call ends, and the events say so.
let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService({ env: { ALLOW_PRIVATE_WEBHOOKS: "1" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());

/** A call with leave_message that rings until it is hung up (…0005): no verdict comes of itself. */
async function ringingToLeaveMessage() {
  const { agentId } = await agentWithNumber(api);
  const call = await api.post("/v1/calls", {
    agent_id: agentId,
    to_number: "+14155550005",
    machine_detection: "leave_message",
    voicemail_message: "Call back.",
  });
  expect(call.body.status).toBe("ringing");
  return { agentId, call };
}

describe("machine detection off (the default)", () => {
  it("sends no call.answered_by and leaves answered_by null", async () => {
    const { agentId } = await agentWithNumber(api);
    const call = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
    expect(call.status).toBe(201);
    expect(call.body).toMatchObject({ status: "in-progress", answered_by: null, voicemail_left: false, record: false });
    const events = await drainEvents(api, agentId);
    expect(events.map((e) => e.event_type)).not.toContain("call.answered_by");
    // Its end says so too: nobody detected, no message left.
    await api.post(`/v1/calls/${call.body.call_id}/hangup`);
    const completed = (await drainEvents(api, agentId)).find((e) => e.event_type === "call.completed");
    expect(completed.payload).toMatchObject({ answered_by: null, voicemail_left: false });
  });

  it("a voicemail box (…0004) answers like anyone else", async () => {
    const { agentId } = await agentWithNumber(api);
    const call = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550004" });
    expect(call.body).toMatchObject({ status: "in-progress", answered_by: null });
  });
});

describe("machine_detection detect", () => {
  it("a person answering: call.answered_by human before the first turn, and the call goes on", async () => {
    const { agentId } = await agentWithNumber(api);
    const call = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142", machine_detection: "detect" });
    expect(call.body).toMatchObject({ status: "in-progress", answered_by: "human", voicemail_left: false });
    const said = await api.post(`/v1/sandbox/calls/${call.body.call_id}/say`, { text: "Hello?" });
    expect(said.status).toBe(201);
    const events = await drainEvents(api, agentId);
    const types = events.map((e) => e.event_type);
    expect(types.indexOf("call.answered_by")).toBeGreaterThanOrEqual(0);
    expect(types.indexOf("call.answered_by")).toBeLessThan(types.indexOf("call.utterance"));
    expect(events.find((e) => e.event_type === "call.answered_by").payload).toEqual({
      call_id: call.body.call_id,
      answered_by: "human",
      machine_detection: "detect",
      voicemail_left: false,
      status: "in-progress",
    });
  });

  it("a machine answering: call.answered_by machine, and the agent decides (the call stays up)", async () => {
    const { agentId } = await agentWithNumber(api);
    const call = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550004", machine_detection: "detect" });
    expect(call.body).toMatchObject({ status: "in-progress", answered_by: "machine", voicemail_left: false });
    const events = await drainEvents(api, agentId);
    expect(events.find((e) => e.event_type === "call.answered_by").payload).toMatchObject({ answered_by: "machine", voicemail_left: false });
    expect(events.map((e) => e.event_type)).not.toContain("call.completed");
  });

  it("a repeated verdict changes nothing and sends no second event", async () => {
    const { agentId } = await agentWithNumber(api);
    const call = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142", machine_detection: "detect" });
    await service.core.callEngine.answeredBy(call.body.call_id, "machine");
    expect((await api.get(`/v1/calls/${call.body.call_id}`)).body.answered_by).toBe("human");
    const events = await drainEvents(api, agentId);
    expect(events.filter((e) => e.event_type === "call.answered_by")).toHaveLength(1);
  });
});

describe("machine_detection leave_message", () => {
  it("a machine: the message is spoken, the call ends, and call.answered_by and call.completed say voicemail_left", async () => {
    const { agentId } = await agentWithNumber(api);
    const message = "Hi, this is the clinic confirming your appointment tomorrow at nine. Call us back at 415 555 0100.";
    const call = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550004", machine_detection: "leave_message", voicemail_message: message });
    expect(call.status).toBe(201);
    expect(call.body).toMatchObject({ status: "completed", answered_by: "machine", voicemail_left: true, ended_by: "agent" });
    const transcript = await api.get(`/v1/calls/${call.body.call_id}/transcript`);
    expect(transcript.body.map((l: any) => [l.role, l.text])).toEqual([["assistant", message]]);
    const events = await drainEvents(api, agentId);
    const types = events.map((e) => e.event_type);
    expect(types.indexOf("call.answered_by")).toBeLessThan(types.indexOf("call.completed"));
    expect(events.find((e) => e.event_type === "call.answered_by").payload).toMatchObject({ answered_by: "machine", voicemail_left: true });
    expect(events.find((e) => e.event_type === "call.completed").payload).toMatchObject({ answered_by: "machine", voicemail_left: true });
  });

  it("a person: no message, the call goes on", async () => {
    const { agentId } = await agentWithNumber(api);
    const call = await api.post("/v1/calls", {
      agent_id: agentId,
      to_number: "+14155550142",
      machine_detection: "leave_message",
      voicemail_message: "Please call back.",
    });
    expect(call.body).toMatchObject({ status: "in-progress", answered_by: "human", voicemail_left: false });
    expect((await api.get(`/v1/calls/${call.body.call_id}/transcript`)).body).toEqual([]);
  });

  it("without voicemail_message: 422 naming it, and no call is placed nor anything charged", async () => {
    const { agentId } = await agentWithNumber(api);
    const before = (await api.get("/v1/billing/balance")).body;
    const calls = (await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data.length;
    const res = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550004", machine_detection: "leave_message" });
    expect(res.status).toBe(422);
    const message = "is required with machine_detection leave_message";
    expect(res.body).toMatchObject({ detail: `voicemail_message ${message}.`, errors: [{ field: "voicemail_message", message, in: "body" }] });
    expect((await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data.length).toBe(calls);
    expect((await api.get("/v1/billing/balance")).body).toEqual(before);
  });

  it("an unknown mode or an empty message: 422 naming the field", async () => {
    const { agentId } = await agentWithNumber(api);
    const mode = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550004", machine_detection: "sometimes" });
    expect(mode.status).toBe(422);
    expect(mode.body.errors.map((e: any) => e.field)).toEqual(["machine_detection"]);
    const empty = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550004", machine_detection: "leave_message", voicemail_message: "  " });
    expect(empty.status).toBe(422);
    expect(empty.body.errors.map((e: any) => e.field)).toEqual(["voicemail_message"]);
  });
});

describe("where call.answered_by goes", () => {
  it.each(["service-relay/1", "service-relay/2"])("to a %s webhook, as an ordinary envelope", async (protocol) => {
    const receiver = await startReceiver(() => 202);
    try {
      const { agentId } = await agentWithNumber(api);
      const hook = await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, protocol, ...(protocol.endsWith("2") ? { capabilities: [] } : {}) });
      expect(hook.status).toBe(201);
      await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550004", machine_detection: "leave_message", voicemail_message: "Call back." });
      const [got] = await receiver.waitFor(1, (r) => r.body?.event_type === "call.answered_by");
      if (protocol.endsWith("2")) expect(messageType(got!)).toBe("call.answered_by");
      expect(got!.body.payload).toMatchObject({ answered_by: "machine", voicemail_left: true });
      (await Contract.load(service.baseUrl)).checkWebhook("event", got!.body);
    } finally {
      await receiver.close();
    }
  });
});

describe("a verdict whose announcement cannot be sent", () => {
  it("is not recorded, no event and no message left, until the carrier's retry applies it", async () => {
    const { agentId, call } = await ringingToLeaveMessage();
    await drainEvents(api, agentId);
    const down = coreWithBusDown(service.core, CALL_ANSWERED_BY_CHANNEL);
    await expect(applyAnsweredBy(down.core, call.body.call_id, "machine")).rejects.toThrow("the bus cannot send");
    expect(down.attempts).toEqual([{ inTransaction: true }]);
    const after = (await api.get(`/v1/calls/${call.body.call_id}`)).body;
    expect(after).toMatchObject({ answered_by: null, voicemail_left: false, status: "ringing" });
    expect(await drainEvents(api, agentId)).toEqual([]);
    await applyAnsweredBy(service.core, call.body.call_id, "human");
    expect((await api.get(`/v1/calls/${call.body.call_id}`)).body.answered_by).toBe("human");
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).toEqual(["call.answered_by"]);
  });
});

describe("a verdict that changes little or nothing", () => {
  it("of no call, or of a call without machine detection: nothing recorded, no event", async () => {
    await expect(applyAnsweredBy(service.core, "call_none", "machine")).resolves.toBeUndefined();
    const { agentId } = await agentWithNumber(api);
    const call = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
    await drainEvents(api, agentId);
    await applyAnsweredBy(service.core, call.body.call_id, "machine");
    expect((await api.get(`/v1/calls/${call.body.call_id}`)).body.answered_by).toBeNull();
    expect(await drainEvents(api, agentId)).toEqual([]);
  });

  it("after the call ended: who answered is kept, but no message is left on an ended line", async () => {
    const { agentId, call } = await ringingToLeaveMessage();
    await api.post(`/v1/calls/${call.body.call_id}/hangup`);
    await drainEvents(api, agentId);
    await applyAnsweredBy(service.core, call.body.call_id, "machine");
    const events = await drainEvents(api, agentId);
    expect(events.map((e) => e.event_type)).toEqual(["call.answered_by"]);
    expect(events[0].payload).toEqual({
      call_id: call.body.call_id,
      answered_by: "machine",
      machine_detection: "leave_message",
      voicemail_left: false,
      status: "canceled",
    });
    expect((await api.get(`/v1/calls/${call.body.call_id}`)).body).toMatchObject({ status: "canceled", answered_by: "machine", voicemail_left: false });
    expect((await api.get(`/v1/calls/${call.body.call_id}/transcript`)).body).toEqual([]);
  });
});
