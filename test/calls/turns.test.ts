import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall, drainEvents } from "../support/telephony.js";

let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());

/** A connected call with its softphone, and the utterance event of one caller turn. */
async function liveTurn(text = "Hello?") {
  const { agentId } = await agentWithNumber(api);
  const callId = await answeredCall(api, agentId);
  const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
  const turnId = await phone.say(text);
  const events = await drainEvents(api, agentId);
  const utterance = events.find((e) => e.turn_id === turnId);
  return { agentId, callId, phone, turnId, utterance };
}

const push = (callId: string, turnId: string, body: Record<string, unknown>, key?: string) =>
  api.post(`/v1/calls/${callId}/context`, body, { query: { turn_id: turnId }, ...(key ? { key } : {}) });

describe("context pushes", () => {
  it("speaks an answer pushed with an API key of the account, and records it", async () => {
    const { callId, phone, turnId } = await liveTurn();
    const res = await push(callId, turnId, { text: "Hi there." });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ call_id: callId, turn_id: turnId, turn_status: "answered", call_ending: false });
    expect(await phone.next((f) => f.type === "speech")).toEqual({ type: "speech", text: "Hi there.", final: true, turn_id: turnId });
    const transcript = (await api.get(`/v1/calls/${callId}/transcript`)).body;
    expect(transcript.map((l: any) => l.role)).toEqual(["user", "assistant"]);
  });

  it("accepts a push token only for its own call", async () => {
    const a = await liveTurn();
    const b = await liveTurn();
    const crossed = await push(b.callId, b.turnId, { text: "wrong call" }, a.utterance.push_token);
    expect(crossed.status).toBe(401);
    const forged = await push(a.callId, a.turnId, { text: "forged" }, "pt_" + "x".repeat(43));
    expect(forged.status).toBe(401);
    const anonymous = await api.request("POST", `/v1/calls/${a.callId}/context`, { query: { turn_id: a.turnId }, body: { text: "x" }, key: null });
    expect(anonymous.status).toBe(401);
    expect((await push(b.callId, b.turnId, { text: "right call" }, b.utterance.push_token)).status).toBe(200);
  });

  it("answers 404 to another account's key, an unknown turn, and a turn of another call", async () => {
    const a = await liveTurn();
    const b = await liveTurn();
    const mallory = await createAccount(service.core);
    expect((await push(a.callId, a.turnId, { text: "x" }, mallory.apiKey)).status).toBe(404);
    expect((await push(a.callId, "turn_00000000000000000000000000", { text: "x" })).status).toBe(404);
    expect((await push(a.callId, b.turnId, { text: "x" })).status).toBe(404);
    expect((await push(a.callId, a.turnId, { text: "still open" })).status).toBe(200);
  });

  it("validates the body", async () => {
    const { callId, turnId } = await liveTurn();
    const res = await push(callId, turnId, { text: "", final: "yes", extra: 1 });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: any) => e.field).sort()).toEqual(["extra", "final", "text"]);
    expect((await api.post(`/v1/calls/${callId}/context`, { text: "x" })).body.errors.map((e: any) => e.field)).toEqual(["turn_id"]);
  });

  it("speaks interim lines with final: false and keeps the turn open for the answer", async () => {
    const { callId, phone, turnId } = await liveTurn("What's my balance?");
    const interim = await push(callId, turnId, { text: "Let me look that up.", final: false });
    expect(interim.body.turn_status).toBe("open");
    expect(await phone.next((f) => f.type === "speech")).toMatchObject({ text: "Let me look that up.", final: false, turn_id: turnId });
    expect((await push(callId, turnId, { text: "Still looking.", final: false })).status).toBe(200);
    expect((await push(callId, turnId, { text: "It is $42." })).body.turn_status).toBe("answered");
    expect((await push(callId, turnId, { text: "Anything else?", final: false })).body.code).toBe("turn_answered");
  });

  it("refuses an answer to a turn the caller interrupted: 409 turn_cancelled", async () => {
    const { callId, phone, turnId } = await liveTurn();
    phone.send({ type: "interrupt" });
    await new Promise((r) => setTimeout(r, 200));
    const res = await push(callId, turnId, { text: "too late" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("turn_cancelled");
    expect(phone.frames.filter((f) => f.type === "speech")).toEqual([]);
  });

  it("speaks exactly one of two racing final answers", async () => {
    for (let round = 0; round < 5; round++) {
      const { callId, phone, turnId } = await liveTurn();
      const results = await Promise.all([push(callId, turnId, { text: "Answer A" }), push(callId, turnId, { text: "Answer B" })]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      expect(results.find((r) => r.status === 409)!.body.code).toBe("turn_answered");
      await new Promise((r) => setTimeout(r, 100));
      expect(phone.frames.filter((f) => f.type === "speech")).toHaveLength(1);
      const assistant = (await api.get(`/v1/calls/${callId}/transcript`)).body.filter((l: any) => l.role === "assistant");
      expect(assistant).toHaveLength(1);
      phone.close();
    }
  });

  it("hangs up after speaking when end_call is true", async () => {
    const { callId, phone, turnId, agentId } = await liveTurn("That's all, thanks.");
    const res = await push(callId, turnId, { text: "Goodbye!", end_call: true });
    expect(res.body.call_ending).toBe(true);
    await phone.next((f) => f.type === "speech" && f.text === "Goodbye!");
    await phone.next((f) => f.type === "status" && f.status === "completed");
    expect((await api.get(`/v1/calls/${callId}`)).body).toMatchObject({ status: "completed", ended_by: "agent" });
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).toEqual(["call.completed"]);
  });

  it("turns keypad digits into a turn with input dtmf", async () => {
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
    phone.send({ type: "dtmf", digits: "42#" });
    const said = await phone.next((f) => f.type === "said");
    const [event] = await drainEvents(api, agentId);
    expect(event).toMatchObject({ event_type: "call.utterance", turn_id: said.turn_id, payload: { text: "42#", input: "dtmf" } });
  });

  it("refuses the far party speaking on an ended call", async () => {
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    await api.post(`/v1/calls/${callId}/hangup`);
    const res = await api.post(`/v1/sandbox/calls/${callId}/say`, { text: "hello?" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("call_not_in_progress");
  });
});

describe("the turn timeout", () => {
  it("speaks the filler once when a turn waits too long, and still takes the late answer", async () => {
    const quick = await startTestService({ env: { TURN_TIMEOUT_MS: "150", TURN_FILLER_TEXT: "Bear with me." } });
    try {
      const owner = await createAccount(quick.core);
      const qapi = new Api(quick.baseUrl, owner.apiKey);
      const { agentId } = await agentWithNumber(qapi);
      const callId = await answeredCall(qapi, agentId);
      const phone = await Softphone.connect(quick.baseUrl, callId, owner.apiKey);
      const turnId = await phone.say("Can you check my order?");
      expect(await phone.next((f) => f.type === "speech", 3_000)).toEqual({ type: "speech", text: "Bear with me.", final: false, turn_id: turnId });
      await new Promise((r) => setTimeout(r, 500));
      expect(phone.frames.filter((f) => f.type === "speech")).toHaveLength(1);
      const late = await qapi.post(`/v1/calls/${callId}/context`, { text: "It shipped today." }, { query: { turn_id: turnId } });
      expect(late.status).toBe(200);
      const transcript = (await qapi.get(`/v1/calls/${callId}/transcript`)).body.map((l: any) => [l.role, l.text]);
      expect(transcript).toEqual([
        ["user", "Can you check my order?"],
        ["assistant", "Bear with me."],
        ["assistant", "It shipped today."],
      ]);
      // An answered turn gets no filler.
      const answered = await phone.say("Thanks!");
      await qapi.post(`/v1/calls/${callId}/context`, { text: "You're welcome." }, { query: { turn_id: answered } });
      await new Promise((r) => setTimeout(r, 400));
      expect(phone.frames.filter((f) => f.type === "speech" && f.text === "Bear with me.")).toHaveLength(1);
    } finally {
      await quick.stop();
    }
  });
});

describe("the softphone WebSocket", () => {
  it("refuses an upgrade with no key (401) and for another account's call (404)", async () => {
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    await expect(Softphone.connect(service.baseUrl, callId, null)).rejects.toMatchObject({ status: 401 });
    await expect(Softphone.connect(service.baseUrl, callId, "sk_" + "B".repeat(43))).rejects.toMatchObject({ status: 401 });
    const mallory = await createAccount(service.core);
    await expect(Softphone.connect(service.baseUrl, callId, mallory.apiKey)).rejects.toMatchObject({ status: 404 });
    await expect(Softphone.connect(service.baseUrl, "call_missing", account.apiKey)).rejects.toMatchObject({ status: 404 });
  });

  it("answers a bad frame with an error frame and stays open", async () => {
    const { agentId } = await agentWithNumber(api);
    const phone = await Softphone.connect(service.baseUrl, await answeredCall(api, agentId), account.apiKey);
    phone.ws.send("not json");
    expect(await phone.next((f) => f.type === "error")).toMatchObject({ code: "validation_error" });
    phone.send({ type: "say", text: "" });
    phone.send({ type: "sing" });
    await phone.next((f) => f.type === "error", 2_000, 2);
    expect(await phone.say("still here")).toMatch(/^turn_/);
  });
});
