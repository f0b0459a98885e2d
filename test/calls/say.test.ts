import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall, drainEvents } from "../support/telephony.js";
import { pushToTurn, transcriptLines } from "../support/turns.js";

// An unprompted line (core/calls/say-on-call.ts), end to end through the sandbox softphone: heard
// and recorded, opening and answering no turn; refused while a turn waits for its answer (409
// turn_open), on an ended call (410), on one not yet answered (409), for another account (404),
// each refusal changing nothing (transcript, call, turns, nothing heard).
let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());

async function liveCall() {
  const { agentId } = await agentWithNumber(api);
  const callId = await answeredCall(api, agentId);
  const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
  await phone.next((f) => f.type === "status");
  return { agentId, callId, phone };
}

const speechOf = (phone: Softphone) => phone.frames.filter((f) => f.type === "speech");

describe("saying a line unprompted", () => {
  it("is heard by the far party, recorded as assistant, and opens no turn", async () => {
    const { agentId, callId, phone } = await liveCall();
    await drainEvents(api, agentId);
    const said = await api.post(`/v1/calls/${callId}/say`, { text: "Are you still there?" });
    expect(said.status).toBe(200);
    expect(said.body).toMatchObject({ call_id: callId, call_ending: false });
    expect(await phone.next((f) => f.type === "speech")).toEqual({ type: "speech", text: "Are you still there?", final: true, turn_id: null });
    expect(await transcriptLines(api, callId)).toEqual([["assistant", "Are you still there?"]]);
    expect(await drainEvents(api, agentId)).toEqual([]);
    // Another line may follow at once: no turn is waiting.
    expect((await api.post(`/v1/calls/${callId}/say`, { text: "Hello?" })).status).toBe(200);
    // The caller's next turn opens as ever and carries both lines.
    const turnId = await phone.say("Yes, sorry.");
    const [utterance] = await drainEvents(api, agentId);
    expect(utterance.turn_id).toBe(turnId);
    expect(utterance.conversation.map((l: any) => l.text)).toEqual(["Are you still there?", "Hello?", "Yes, sorry."]);
    await phone.close();
  });

  it("is allowed again once the open turn is answered", async () => {
    const { callId, phone } = await liveCall();
    const turnId = await phone.say("What are your hours?");
    expect((await pushToTurn(api, callId, turnId, { text: "Nine to five." })).status).toBe(200);
    expect((await api.post(`/v1/calls/${callId}/say`, { text: "Anything else?" })).status).toBe(200);
    expect(await transcriptLines(api, callId)).toEqual([
      ["user", "What are your hours?"],
      ["assistant", "Nine to five."],
      ["assistant", "Anything else?"],
    ]);
    await phone.close();
  });

  it("with end_call, hangs up after the line", async () => {
    const { agentId, callId, phone } = await liveCall();
    await drainEvents(api, agentId);
    const said = await api.post(`/v1/calls/${callId}/say`, { text: "Goodbye.", end_call: true });
    expect(said.body.call_ending).toBe(true);
    expect(await phone.next((f) => f.type === "speech")).toMatchObject({ text: "Goodbye." });
    expect(await phone.closed).toMatchObject({ code: 1000 });
    expect((await api.get(`/v1/calls/${callId}`)).body).toMatchObject({ status: "completed", ended_by: "agent" });
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).toEqual(["call.completed"]);
  });
});

describe("a line refused", () => {
  it("while a turn waits for its answer: 409 turn_open naming the turn; nothing said, the turn still answerable", async () => {
    const { callId, phone } = await liveCall();
    const turnId = await phone.say("Can I book for eight?");
    const refused = await api.post(`/v1/calls/${callId}/say`, { text: "Are you still there?", end_call: true });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "turn_open", turn_id: turnId });
    expect(refused.body.detail).toBe(
      `Turn ${turnId} is waiting for its answer: answer it with POST /v1/calls/${callId}/context?turn_id=${turnId} instead of an unprompted line.`,
    );
    await new Promise((r) => setTimeout(r, 150));
    expect(speechOf(phone)).toEqual([]);
    expect(await transcriptLines(api, callId)).toEqual([["user", "Can I book for eight?"]]);
    expect((await api.get(`/v1/calls/${callId}`)).body.status).toBe("in-progress");
    expect((await pushToTurn(api, callId, turnId, { text: "Yes." })).status).toBe(200);
    await phone.close();
  });

  it("while an interim line keeps the turn open", async () => {
    const { agentId, callId, phone } = await liveCall();
    // An agent whose events go to the mailbox may speak interim lines.
    const turnId = await phone.say("Check my order.");
    await drainEvents(api, agentId);
    expect((await pushToTurn(api, callId, turnId, { text: "One moment.", final: false })).body.turn_status).toBe("open");
    const refused = await api.post(`/v1/calls/${callId}/say`, { text: "Still looking." });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("turn_open");
    expect((await pushToTurn(api, callId, turnId, { text: "Found it." })).body.turn_status).toBe("answered");
    expect((await api.post(`/v1/calls/${callId}/say`, { text: "Anything else?" })).status).toBe(200);
    await phone.close();
  });

  it("on an ended call: 410 call_ended, nothing recorded", async () => {
    const { callId, phone } = await liveCall();
    await api.post(`/v1/calls/${callId}/hangup`);
    await phone.closed;
    const refused = await api.post(`/v1/calls/${callId}/say`, { text: "Hello?" });
    expect(refused.status).toBe(410);
    expect(refused.body.code).toBe("call_ended");
    expect(refused.body.detail).toBe(`Call ${callId} has ended (completed); a line cannot reach it.`);
    expect(await transcriptLines(api, callId)).toEqual([]);
  });

  it("on a call still ringing: 409 call_not_in_progress, the call left ringing", async () => {
    const { agentId } = await agentWithNumber(api);
    const ringing = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550005" })).body;
    expect(ringing.status).toBe("ringing");
    const refused = await api.post(`/v1/calls/${ringing.call_id}/say`, { text: "Hello?", end_call: true });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("call_not_in_progress");
    expect(refused.body.detail).toBe(`Call ${ringing.call_id} is ringing, not connected yet; a line needs a connected call. Wait for it to be answered.`);
    expect((await api.get(`/v1/calls/${ringing.call_id}`)).body.status).toBe("ringing");
    expect(await transcriptLines(api, ringing.call_id)).toEqual([]);
    await api.post(`/v1/calls/${ringing.call_id}/hangup`);
  });

  it("for another account's call, or none: 404, nothing said", async () => {
    const { callId, phone } = await liveCall();
    const mallory = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
    const foreign = await mallory.post(`/v1/calls/${callId}/say`, { text: "Hijacked.", end_call: true });
    expect(foreign.status).toBe(404);
    const none = await api.post("/v1/calls/call_00000000000000000000000000/say", { text: "x" });
    expect(none.status).toBe(404);
    expect(none.body.detail).toBe('No call with id "call_00000000000000000000000000" exists on this account.');
    await new Promise((r) => setTimeout(r, 150));
    expect(speechOf(phone)).toEqual([]);
    expect(await transcriptLines(api, callId)).toEqual([]);
    expect((await api.get(`/v1/calls/${callId}`)).body.status).toBe("in-progress");
    await phone.close();
  });

  it("with a bad body: 422 naming each field", async () => {
    const { callId, phone } = await liveCall();
    const refused = await api.post(`/v1/calls/${callId}/say`, { text: " ", end_call: "yes", turn_id: "x" });
    expect(refused.status).toBe(422);
    expect(refused.body.errors.map((e: any) => e.field).sort()).toEqual(["end_call", "text", "turn_id"]);
    expect((await api.post(`/v1/calls/${callId}/say`, { text: "x".repeat(4001) })).status).toBe(422);
    expect(await transcriptLines(api, callId)).toEqual([]);
    await phone.close();
  });
});
