import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerTurn } from "../../core/calls/answer-turn.js";
import { calls } from "../../core/db/schema/calls.js";
import { turns } from "../../core/db/schema/turns.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { expectBalanceIsLedgerSum, ledgerOf, manualClock } from "../billing/support.js";
import { messageType, protocol2Call } from "../support/protocol2.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall, drainEvents } from "../support/telephony.js";
import { pushToTurn, transcriptLines, webhookCall } from "../support/turns.js";
import { waitFor } from "../support/twilio/service.js";

// Handing a call to a person on the sandbox (core/calls/transfer.ts, DESIGN §6b): cold and warm,
// answered and not (0001 busy, 0002 no answer after TRANSFER_TIMEOUT_MS, 0003 failed), as the
// softphone (the caller) and the agent's events see it, a transfer given as a turn's answer, and
// the bridged leg's bill. The refusals are in transfer.error.test.ts.
let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService({
    env: { TURN_TIMEOUT_MS: "60000", TRANSFER_TIMEOUT_MS: "300", BILLING_INTERVAL_MS: "3600000", ALLOW_PRIVATE_WEBHOOKS: "1" },
  });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());

/** A connected call with its softphone, events drained. */
async function liveCall(a: Api = api, key = account.apiKey) {
  const { agentId } = await agentWithNumber(a);
  const callId = await answeredCall(a, agentId);
  const phone = await Softphone.connect(service.baseUrl, callId, key);
  await drainEvents(a, agentId);
  return { agentId, callId, phone };
}

/** Collects the agent's events until one of `type` has arrived; returns all collected. */
async function eventsUntil(agentId: string, type: string, a: Api = api, ms = 5_000) {
  const seen: any[] = [];
  await waitFor(async () => {
    seen.push(...(await drainEvents(a, agentId)));
    return seen.some((e) => e.event_type === type);
  }, ms);
  return seen;
}

describe("a cold transfer", () => {
  it("puts the caller through and the agent leaves: events, softphone frames, transferred_to, no more turns, one call", async () => {
    const { agentId, callId, phone } = await liveCall();
    const turnId = await phone.say("Can I talk to a human?");
    const res = await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155557777" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ call_id: callId, status: "in-progress", transfer_status: "dialing", transferred_to: null });

    const events = await eventsUntil(agentId, "call.transfer.answered");
    const types = events.map((e) => e.event_type);
    expect(types.filter((t) => t.startsWith("call.transfer"))).toEqual(["call.transfer.started", "call.transfer.answered"]);
    expect(events.find((e) => e.event_type === "call.transfer.started").payload).toEqual({
      call_id: callId,
      to_number: "+14155557777",
      mode: "cold",
      whisper: null,
    });
    expect(await phone.next((f) => f.type === "transfer" && f.status === "dialing")).toEqual({
      type: "transfer",
      status: "dialing",
      to_number: "+14155557777",
      mode: "cold",
    });
    await phone.next((f) => f.type === "transfer" && f.status === "answered");

    const call = (await api.get(`/v1/calls/${callId}`)).body;
    expect(call).toMatchObject({ status: "in-progress", transfer_status: "bridged", transferred_to: "+14155557777" });
    // The agent's open turn was given up: an answer to it is refused, and nothing is spoken.
    const late = await pushToTurn(api, callId, turnId, { text: "Sure!" });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe("turn_abandoned");
    const [abandoned] = await service.core.db.select().from(turns).where(eq(turns.turnId, turnId));
    expect(abandoned!.status).toBe("abandoned");
    // The caller now talks to the person: no turn opens for the agent.
    const from = phone.frames.length;
    phone.send({ type: "say", text: "Hello, person?" });
    expect(await phone.next((f) => f.type === "error", 5_000, from)).toMatchObject({ code: "transfer_in_progress" });
    const said = await api.post(`/v1/sandbox/calls/${callId}/say`, { text: "Still me" });
    expect(said.status).toBe(409);
    expect(said.body.code).toBe("transfer_in_progress");
    // A second transfer is refused.
    expect((await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155558888" })).status).toBe(409);

    // The caller hangs up: one call, its transcript whole, the transfer kept on the record.
    expect((await api.post(`/v1/sandbox/calls/${callId}/hangup`)).status).toBe(200);
    const ended = (await api.get(`/v1/calls/${callId}`)).body;
    expect(ended).toMatchObject({ status: "completed", ended_by: "caller", transfer_status: "bridged", transferred_to: "+14155557777" });
    expect((await api.get(`/v1/billing/verify/${callId}`)).body.agrees).toBe(true);
    expect(await transcriptLines(api, callId)).toEqual([["user", "Can I talk to a human?"]]);
    const list = (await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data;
    expect(list).toHaveLength(1);
    await expectBalanceIsLedgerSum(service.core, account.accountId);
  });

  it("that finds nobody ends the call: call.transfer.failed with the reason, ended by the carrier", async () => {
    const { agentId, callId, phone } = await liveCall();
    expect((await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155550001", mode: "cold" })).status).toBe(200);
    const events = await eventsUntil(agentId, "call.completed");
    const failed = events.find((e) => e.event_type === "call.transfer.failed");
    expect(failed.payload).toEqual({
      call_id: callId,
      to_number: "+14155550001",
      mode: "cold",
      reason: "busy",
      returned_to_agent: false,
      turn_text: null,
    });
    expect(events.some((e) => e.event_type === "call.utterance")).toBe(false);
    expect(await phone.next((f) => f.type === "transfer" && f.status === "failed")).toMatchObject({ reason: "busy" });
    expect((await api.get(`/v1/calls/${callId}`)).body).toMatchObject({
      status: "completed",
      ended_by: "carrier",
      transfer_status: "failed",
      transferred_to: null,
    });
  });
});

describe("a warm transfer", () => {
  it("whispers to the person before bridging the caller", async () => {
    const { agentId, callId, phone } = await liveCall();
    const res = await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155557777", mode: "warm", whisper: "Ann calling about her order 42." });
    expect(res.status).toBe(200);
    const events = await eventsUntil(agentId, "call.transfer.answered");
    expect(events.find((e) => e.event_type === "call.transfer.started").payload).toMatchObject({ mode: "warm", whisper: "Ann calling about her order 42." });
    const whisper = await phone.next((f) => f.type === "transfer" && f.status === "whisper");
    expect(whisper).toEqual({ type: "transfer", status: "whisper", to_number: "+14155557777", text: "Ann calling about her order 42." });
    const answered = await phone.next((f) => f.type === "transfer" && f.status === "answered");
    // The whisper comes before the bridge.
    expect(phone.frames.indexOf(whisper)).toBeLessThan(phone.frames.indexOf(answered));
    expect((await api.get(`/v1/calls/${callId}`)).body).toMatchObject({ transfer_status: "bridged", transferred_to: "+14155557777" });
    // call.transfer.answered says when, and carries no whisper.
    const [row] = await service.core.db.select().from(calls).where(eq(calls.callId, callId));
    expect(events.find((e) => e.event_type === "call.transfer.answered").payload).toEqual({
      call_id: callId,
      to_number: "+14155557777",
      mode: "warm",
      answered_at: row!.transferAnsweredAt!.toISOString(),
    });
  });

  for (const [to, reason] of [
    ["+14155550001", "busy"],
    ["+14155550002", "no-answer"],
    ["+14155550003", "failed"],
  ] as const) {
    it(`gives the caller back to the agent when the person's line is ${reason}, with a turn that says why`, async () => {
      const { agentId, callId, phone } = await liveCall();
      expect((await api.post(`/v1/calls/${callId}/transfer`, { to_number: to, mode: "warm", whisper: "A caller for you." })).status).toBe(200);
      const events = await eventsUntil(agentId, "call.utterance");
      const failed = events.find((e) => e.event_type === "call.transfer.failed");
      // The whisper is on call.transfer.started only.
      expect(failed.payload).toEqual({
        call_id: callId,
        to_number: to,
        mode: "warm",
        reason,
        returned_to_agent: true,
        turn_text: `[transfer failed: ${reason}]`,
      });
      const turn = events.find((e) => e.event_type === "call.utterance");
      expect(turn.payload).toMatchObject({ text: `[transfer failed: ${reason}]`, input: "speech" });
      // The failure comes before the turn, and the whisper was never heard.
      expect(events.indexOf(failed)).toBeLessThan(events.indexOf(turn));
      expect(phone.frames.some((f) => f.type === "transfer" && f.status === "whisper")).toBe(false);
      expect((await api.get(`/v1/calls/${callId}`)).body).toMatchObject({ status: "in-progress", transfer_status: "failed", transferred_to: null });

      // The agent answers the turn; the caller hears it and speaks to the agent again.
      expect((await pushToTurn(api, callId, turn.turn_id, { text: "Sorry, nobody is free. Can I help?" })).status).toBe(200);
      expect((await phone.next((f) => f.type === "speech")).text).toBe("Sorry, nobody is free. Can I help?");
      expect(await phone.say("Yes please.")).toMatch(/^turn_/);
      // And may try again.
      expect((await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155557777" })).status).toBe(200);
    });
  }

  it("that times out is a no-answer only after TRANSFER_TIMEOUT_MS", async () => {
    const { agentId, callId } = await liveCall();
    const started = Date.now();
    expect((await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155550002", mode: "warm" })).status).toBe(200);
    expect((await api.get(`/v1/calls/${callId}`)).body.transfer_status).toBe("dialing");
    await eventsUntil(agentId, "call.transfer.failed");
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });
});

describe("transfer events on webhooks", () => {
  it("reach a service-relay/1 webhook as envelopes", async () => {
    const receiver = await startReceiver();
    try {
      const { callId, phone } = await webhookCall(api, receiver.url);
      expect((await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155550001", mode: "warm" })).status).toBe(200);
      await phone.next((f) => f.type === "transfer" && f.status === "failed");
      await waitFor(() => receiver.requests.filter((r) => r.body?.payload?.call_id === callId).length >= 3);
      const types = receiver.requests.filter((r) => r.body?.payload?.call_id === callId).map((r) => r.body.event_type);
      // Each is its own delivery job: they may land in any order.
      expect(types.sort()).toEqual(["call.transfer.failed", "call.transfer.started", "call.utterance"]);
      expect(receiver.requests.find((r) => r.body?.event_type === "call.transfer.failed")!.body.payload.reason).toBe("busy");
    } finally {
      await receiver.close();
    }
  });

  it("reach a service-relay/2 webhook as envelopes, the caller's return as a call.task.open", async () => {
    const receiver = await startReceiver(() => 202);
    try {
      const { callId, phone } = await protocol2Call(api, receiver.url, []);
      expect((await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155550002", mode: "warm" })).status).toBe(200);
      await phone.next((f) => f.type === "transfer" && f.status === "failed");
      const mineOf = () => receiver.requests.filter((r) => r.body?.call_id === callId || r.body?.payload?.call_id === callId);
      await waitFor(() => mineOf().length >= 4);
      const mine = mineOf();
      expect(mine.map(messageType).sort()).toEqual(["call.session.start", "call.task.open", "call.transfer.failed", "call.transfer.started"]);
      expect(mine.find((r) => messageType(r) === "call.transfer.failed")!.body).toMatchObject({
        event_type: "call.transfer.failed",
        payload: { reason: "no-answer", returned_to_agent: true },
      });
      expect(mine.find((r) => messageType(r) === "call.task.open")!.body.text).toBe("[transfer failed: no-answer]");
    } finally {
      await receiver.close();
    }
  });
});

describe("a transfer as a turn's answer", () => {
  it("speaks the text, answers the turn and transfers", async () => {
    const { agentId, callId, phone } = await liveCall();
    const turnId = await phone.say("Put me through to sales.");
    const res = await pushToTurn(api, callId, turnId, {
      text: "Putting you through now.",
      transfer_to: "+14155557777",
      transfer_mode: "warm",
      whisper: "A sales lead.",
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ call_id: callId, turn_id: turnId, turn_status: "answered", transfer: { to_number: "+14155557777", mode: "warm" } });
    expect(res.body.call_ending).toBe(false);
    expect(await phone.next((f) => f.type === "speech")).toMatchObject({ text: "Putting you through now.", final: true });
    await eventsUntil(agentId, "call.transfer.answered");
    expect(await transcriptLines(api, callId)).toEqual([
      ["user", "Put me through to sales."],
      ["assistant", "Putting you through now."],
    ]);
    // The turn was answered, so a second answer is refused.
    expect((await pushToTurn(api, callId, turnId, { text: "again" })).body.code).toBe("turn_answered");
  });

  it("without text, answers the turn with the transfer alone (its push token will do)", async () => {
    const { agentId, callId, phone } = await liveCall();
    const turnId = await phone.say("Human please.");
    const utterance = (await drainEvents(api, agentId)).find((e) => e.turn_id === turnId);
    const res = await pushToTurn(api, callId, turnId, { transfer_to: "+14155557777" }, utterance.push_token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ turn_status: "answered", transfer: { to_number: "+14155557777", mode: "cold", status: "dialing" } });
    const events = await eventsUntil(agentId, "call.transfer.answered");
    expect(events.find((e) => e.event_type === "call.transfer.started").payload.mode).toBe("cold");
    // The transfer answered the turn; it was not given up with the call's other open turns.
    expect((await pushToTurn(api, callId, turnId, { text: "again" }, utterance.push_token)).body.code).toBe("turn_answered");
    expect(await transcriptLines(api, callId)).toEqual([["user", "Human please."]]);
  });

  it("refuses an answer with neither text nor transfer_to, and transfer options without transfer_to (422)", async () => {
    const { callId, phone } = await liveCall();
    const turnId = await phone.say("Hi");
    const empty = await pushToTurn(api, callId, turnId, {});
    expect(empty.status).toBe(422);
    expect(empty.body.errors.map((e: any) => e.field)).toContain("text");
    // The core refuses it too, for a caller that skips the schema.
    const message = "text is required (or transfer_to)";
    await expect(answerTurn(service.core, { accountId: account.accountId }, callId, turnId, { final: true, end_call: false })).rejects.toMatchObject({
      code: "validation_error",
      detail: `The answer is refused: ${message}.`,
      errors: [{ field: "text", message }],
    });
    const orphan = await pushToTurn(api, callId, turnId, { text: "x", transfer_mode: "warm" });
    expect(orphan.status).toBe(422);
    expect(orphan.body.errors.map((e: any) => e.field)).toContain("transfer_to");
    expect((await api.get(`/v1/calls/${callId}`)).body.transfer_status).toBeNull();
  });
});

describe("the bridged leg's bill", () => {
  it("is billed per second at the outbound rate from the person's answer, and ends the call when the balance runs out", async () => {
    const clock = manualClock(service.core);
    try {
      // After the number (1.15): the call's first two blocks and the leg's first block, at 0.015 a minute.
      const poor = await createAccount(service.core, undefined, { creditMicros: 1_150_000 + 30_000 + 15_000 });
      const poorApi = new Api(service.baseUrl, poor.apiKey);
      const { agentId, callId } = await liveCall(poorApi, poor.apiKey);
      const answeredAt = Date.parse((await poorApi.get(`/v1/calls/${callId}`)).body.answered_at);
      expect((await poorApi.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155557777" })).status).toBe(200);
      await eventsUntil(agentId, "call.transfer.answered", poorApi);
      const legRows = (await ledgerOf(service.core, poor.accountId)).filter((r) => r.item === "call.transfer");
      expect(legRows.map((r) => [r.amountMicros, r.quantity])).toEqual([[-15_000, 60]]);

      // 56 s on: the call buys its next block (the last money); the leg cannot, but is paid for 4 s more.
      clock.set(new Date(answeredAt + 56_000));
      await service.core.billing.runOnce();
      // While it runs, the call's charge counts the leg's prepaid minute beside its own two blocks.
      expect((await poorApi.get(`/v1/calls/${callId}`)).body).toMatchObject({ status: "in-progress", charge: "0.045000" });
      // 61 s on: the leg's paid minute is over and nothing pays the next: the call ends when it ran out.
      clock.set(new Date(answeredAt + 61_000));
      await service.core.billing.runOnce();
      const ended = (await poorApi.get(`/v1/calls/${callId}`)).body;
      expect(ended).toMatchObject({ status: "completed", ended_by: "service", duration_seconds: 60, transferred_to: "+14155557777" });
      expect(ended.ended_at).toBe(new Date(answeredAt + 60_000).toISOString());
      // The call's own second block was not used and came back; the leg paid exactly its minute.
      expect(ended.charge).toBe("0.030000");
      const balance = await expectBalanceIsLedgerSum(service.core, poor.accountId);
      expect(balance).toBe(15_000);
      // The call's verification counts the leg: its rows agree with what the call says it cost.
      const verified = (await poorApi.get(`/v1/billing/verify/${callId}`)).body;
      expect(verified).toMatchObject({ agrees: true, charged: "0.030000", expected_charge: "0.030000" });
      expect(verified.ledger.map((r: any) => r.item)).toContain("call.transfer");
    } finally {
      service.core.now = () => new Date();
    }
  });
});
