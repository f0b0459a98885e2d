import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pushContext } from "../../core/calls/push-context.js";
import { PUSH_TOKENS_KEPT, pushTokenFor } from "../../core/calls/push-token.js";
import { turns } from "../../core/db/schema/turns.js";
import { loadServerSecrets } from "../../core/secrets.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall, drainEvents } from "../support/telephony.js";
import { mailboxCall, pushToTurn, sayOnCall } from "../support/turns.js";

// Pushing context to a caller's turn (core/calls/push-context.ts): an answer spoken and recorded,
// interim lines, racing answers, hanging up after the answer; each refusal's code and the detail a
// client shows or logs, the 401 of a push token that does not fit, and what an accepted push
// leaves behind (the conversation the next turn carries, the filler timer). The 409 of a stale
// turn is in turn-staleness.test.ts.
let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService({ env: { ALLOW_PRIVATE_WEBHOOKS: "1", TURN_TIMEOUT_MS: "60000" } });
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

describe("context pushes", () => {
  it("speaks an answer pushed with an API key of the account, and records it", async () => {
    const { callId, phone, turnId } = await liveTurn();
    const res = await pushToTurn(api, callId, turnId, { text: "Hi there." });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ call_id: callId, turn_id: turnId, turn_status: "answered", call_ending: false });
    expect(await phone.next((f) => f.type === "speech")).toEqual({ type: "speech", text: "Hi there.", final: true, turn_id: turnId });
    const transcript = (await api.get(`/v1/calls/${callId}/transcript`)).body;
    expect(transcript.map((l: any) => l.role)).toEqual(["user", "assistant"]);
  });

  it("accepts a push token only for its own call", async () => {
    const a = await liveTurn();
    const b = await liveTurn();
    const crossed = await pushToTurn(api, b.callId, b.turnId, { text: "wrong call" }, a.utterance.push_token);
    expect(crossed.status).toBe(401);
    const forged = await pushToTurn(api, a.callId, a.turnId, { text: "forged" }, "pt_" + "x".repeat(43));
    expect(forged.status).toBe(401);
    const anonymous = await api.request("POST", `/v1/calls/${a.callId}/context`, { query: { turn_id: a.turnId }, body: { text: "x" }, key: null });
    expect(anonymous.status).toBe(401);
    expect((await pushToTurn(api, b.callId, b.turnId, { text: "right call" }, b.utterance.push_token)).status).toBe(200);
  });

  it("answers 404 to another account's key, an unknown turn, and a turn of another call", async () => {
    const a = await liveTurn();
    const b = await liveTurn();
    const mallory = await createAccount(service.core);
    expect((await pushToTurn(api, a.callId, a.turnId, { text: "x" }, mallory.apiKey)).status).toBe(404);
    expect((await pushToTurn(api, a.callId, "turn_00000000000000000000000000", { text: "x" })).status).toBe(404);
    expect((await pushToTurn(api, a.callId, b.turnId, { text: "x" })).status).toBe(404);
    expect((await pushToTurn(api, a.callId, a.turnId, { text: "still open" })).status).toBe(200);
  });

  it("validates the body", async () => {
    const { callId, turnId } = await liveTurn();
    const res = await pushToTurn(api, callId, turnId, { text: "", final: "yes", extra: 1 });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: any) => e.field).sort()).toEqual(["extra", "final", "text"]);
    expect((await api.post(`/v1/calls/${callId}/context`, { text: "x" })).body.errors.map((e: any) => e.field)).toEqual(["turn_id"]);
  });

  it("speaks interim lines with final: false and keeps the turn open for the answer", async () => {
    const { callId, phone, turnId } = await liveTurn("What's my balance?");
    const interim = await pushToTurn(api, callId, turnId, { text: "Let me look that up.", final: false });
    expect(interim.body.turn_status).toBe("open");
    expect(await phone.next((f) => f.type === "speech")).toMatchObject({ text: "Let me look that up.", final: false, turn_id: turnId });
    expect((await pushToTurn(api, callId, turnId, { text: "Still looking.", final: false })).status).toBe(200);
    expect((await pushToTurn(api, callId, turnId, { text: "It is $42." })).body.turn_status).toBe("answered");
    expect((await pushToTurn(api, callId, turnId, { text: "Anything else?", final: false })).body.code).toBe("turn_answered");
  });

  it("refuses an answer to a turn the caller interrupted: 409 turn_cancelled", async () => {
    const { callId, phone, turnId } = await liveTurn();
    phone.send({ type: "interrupt" });
    await new Promise((r) => setTimeout(r, 200));
    const res = await pushToTurn(api, callId, turnId, { text: "too late" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("turn_cancelled");
    expect(phone.frames.filter((f) => f.type === "speech")).toEqual([]);
  });

  it("speaks exactly one of two racing final answers", async () => {
    for (let round = 0; round < 5; round++) {
      const { callId, phone, turnId } = await liveTurn();
      const results = await Promise.all([pushToTurn(api, callId, turnId, { text: "Answer A" }), pushToTurn(api, callId, turnId, { text: "Answer B" })]);
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
    const res = await pushToTurn(api, callId, turnId, { text: "Goodbye!", end_call: true });
    expect(res.body.call_ending).toBe(true);
    await phone.next((f) => f.type === "speech" && f.text === "Goodbye!");
    await phone.next((f) => f.type === "status" && f.status === "completed");
    expect((await api.get(`/v1/calls/${callId}`)).body).toMatchObject({ status: "completed", ended_by: "agent" });
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).toEqual(["call.completed"]);
  });
});

describe("a push refused", () => {
  it("to a turn the caller interrupted: 409 turn_cancelled, saying to discard the answer", async () => {
    const { callId } = await mailboxCall(api);
    const turnId = await sayOnCall(api, callId, "Hello?");
    const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
    phone.send({ type: "interrupt" });
    await expect.poll(async () => (await service.core.db.select().from(turns).where(eq(turns.turnId, turnId)))[0]!.status).toBe("cancelled");
    const res = await pushToTurn(api, callId, turnId, { text: "Hi!" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("turn_cancelled");
    expect(res.body.detail).toBe(`Turn ${turnId} was cancelled: the caller interrupted. Discard this answer.`);
    phone.close();
  });

  it("to a turn already answered: 409 turn_answered, saying only the first final push is spoken", async () => {
    const { callId } = await mailboxCall(api);
    const turnId = await sayOnCall(api, callId, "Hello?");
    expect((await pushToTurn(api, callId, turnId, { text: "Hi!" })).status).toBe(200);
    const res = await pushToTurn(api, callId, turnId, { text: "Hi again!" });
    expect(res.body).toMatchObject({ code: "turn_answered", detail: `Turn ${turnId} has already been answered; only the first final push is spoken.` });
  });

  it("to a turn whose utterance could not be delivered: 409 turn_abandoned, saying to discard the answer", async () => {
    const { callId } = await mailboxCall(api);
    const turnId = await sayOnCall(api, callId, "Hello?");
    // What abandonDelivery does to the live turn of a webhook delivery it gives up.
    await service.core.db.update(turns).set({ status: "abandoned", closedAt: new Date() }).where(eq(turns.turnId, turnId));
    const res = await pushToTurn(api, callId, turnId, { text: "Hi!" });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      code: "turn_abandoned",
      detail: `Turn ${turnId} was given up: its call.utterance could not be delivered. Discard this answer.`,
    });
  });

  it("after the call ended: 410 call_ended, with the status it ended in", async () => {
    const { callId } = await mailboxCall(api);
    const turnId = await sayOnCall(api, callId, "Bye.");
    await api.post(`/v1/sandbox/calls/${callId}/hangup`);
    const res = await pushToTurn(api, callId, turnId, { text: "Goodbye!" });
    expect(res.status).toBe(410);
    expect(res.body).toMatchObject({ code: "call_ended", detail: `Call ${callId} has ended (completed). Abandon the work.` });
  });

  it("for an unknown call or turn: 404 saying which kind of thing was not found", async () => {
    const { callId } = await mailboxCall(api);
    const turnId = await sayOnCall(api, callId, "Hello?");
    const noCall = await pushToTurn(api, "call_00000000000000000000000000", turnId, { text: "x" });
    expect(noCall.body).toMatchObject({ code: "not_found", detail: 'No call with id "call_00000000000000000000000000" exists on this account.' });
    const noTurn = await pushToTurn(api, callId, "turn_00000000000000000000000000", { text: "x" });
    expect(noTurn.body).toMatchObject({ code: "not_found", detail: 'No turn with id "turn_00000000000000000000000000" exists on this account.' });
  });

  it("an interim line to a protocol-2 runtime that did not declare streams_progress: 422 naming final", async () => {
    const receiver = await startReceiver(() => 202);
    try {
      const { agentId } = await agentWithNumber(api);
      await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, protocol: "service-relay/2", capabilities: [] });
      const callId = await answeredCall(api, agentId);
      const turnId = await sayOnCall(api, callId, "What's my balance?");
      const message = "interim lines need the streams_progress capability on this agent's service-relay/2 webhook";
      await expect(
        pushContext(service.core, { accountId: account.accountId }, { callId, turnId, text: "One moment.", final: false, endCall: false }),
      ).rejects.toMatchObject({
        code: "validation_error",
        detail: `final: false is refused: ${message}.`,
        errors: [{ field: "final", message }],
      });
    } finally {
      await receiver.close();
    }
  });
});

describe("push tokens", () => {
  it("refuses a token that is not the call's with 401 and a Bearer challenge, before anything else", async () => {
    const { callId } = await mailboxCall(api);
    const turnId = await sayOnCall(api, callId, "Hello?");
    const challenge = { "WWW-Authenticate": 'Bearer realm="agentline", error="invalid_token"' };
    const forged = pushContext(service.core, { pushToken: "pt_" + "x".repeat(43) }, { callId, turnId, text: "x", final: true, endCall: false });
    await expect(forged).rejects.toMatchObject({ code: "unauthorized", status: 401, detail: "The push token is not valid for this call.", headers: challenge });
    // A token that is right for a call id no call has: the same 401, so tokens reveal no call ids.
    const ghost = "call_00000000000000000000000000";
    const unknown = pushContext(
      service.core,
      { pushToken: pushTokenFor(service.core, ghost) },
      { callId: ghost, turnId, text: "x", final: true, endCall: false },
    );
    await expect(unknown).rejects.toMatchObject({ code: "unauthorized", status: 401, headers: challenge });
  });

  it("are derived the same way by every release, so tokens handed out before a deploy still work after it", async () => {
    const secrets = await loadServerSecrets(undefined as never, "a-fixed-server-secret-of-at-least-32-characters");
    expect(pushTokenFor({ secrets }, "call_01jd0000000000000000000000")).toBe(GOLDEN_TOKEN);
  });

  it("are computed once per call while kept, the oldest of more than PUSH_TOKENS_KEPT computed anew", async () => {
    const secrets = await loadServerSecrets(undefined as never, "a-fixed-server-secret-of-at-least-32-characters");
    let derived = 0;
    const counting = { secrets: { derive: (label: string) => (derived++, secrets.derive(label)) } };
    const ids = Array.from({ length: PUSH_TOKENS_KEPT + 1 }, (_, i) => `call_${String(i).padStart(26, "0")}`);
    const tokens = ids.map((id) => pushTokenFor(counting, id));
    expect(derived).toBe(ids.length);
    // The newest are kept: asked again, nothing is computed, and the token is the same.
    expect(pushTokenFor(counting, ids.at(-1)!)).toBe(tokens.at(-1));
    expect(pushTokenFor(counting, ids[1]!)).toBe(tokens[1]);
    expect(derived).toBe(ids.length);
    // The oldest was dropped: computed again, to the same token.
    expect(pushTokenFor(counting, ids[0]!)).toBe(tokens[0]);
    expect(derived).toBe(ids.length + 1);
    expect(new Set(tokens).size).toBe(ids.length);
  });
});

describe("an accepted push", () => {
  it("is part of the conversation the next utterance carries, as the assistant's line", async () => {
    const { agentId, callId } = await mailboxCall(api);
    const first = await sayOnCall(api, callId, "Do you open on Sundays?");
    expect((await pushToTurn(api, callId, first, { text: "No, only weekdays." })).status).toBe(200);
    await sayOnCall(api, callId, "Thanks.");
    const events = await drainEvents(api, agentId);
    const last = events.at(-1);
    expect(last.conversation.map((l: any) => [l.role, l.text])).toEqual([
      ["user", "Do you open on Sundays?"],
      ["assistant", "No, only weekdays."],
      ["user", "Thanks."],
    ]);
  });

  it("when interim, still leaves the turn its filler if the answer is slow (an interim line is not the answer)", async () => {
    const quick = await startTestService({ env: { TURN_TIMEOUT_MS: "400", TURN_FILLER_TEXT: "Bear with me." } });
    try {
      const owner = await createAccount(quick.core);
      const qapi = new Api(quick.baseUrl, owner.apiKey);
      const { agentId } = await agentWithNumber(qapi);
      const callId = await answeredCall(qapi, agentId);
      const phone = await Softphone.connect(quick.baseUrl, callId, owner.apiKey);
      const turnId = await phone.say("Can you check my order?");
      await qapi.post(`/v1/calls/${callId}/context`, { text: "Let me look.", final: false }, { query: { turn_id: turnId } });
      expect(await phone.next((f) => f.type === "speech" && f.text === "Bear with me.", 5_000)).toMatchObject({ final: false, turn_id: turnId });
      phone.close();
    } finally {
      await quick.stop();
    }
  });
});

// The token for that call under that secret, as the service derives it now (HMAC under the key labelled "push-token").
const GOLDEN_TOKEN = "pt_MU1qp1rDvgR7xrRp6nTB33RG1cXoF4TB6MCg71cUMug";
