import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pushTokenFor } from "../../core/calls/push-token.js";
import { CALL_TRANSFER_CHANNEL, checkTransfer, transferCall, transferOutcome } from "../../core/calls/transfer.js";
import { calls } from "../../core/db/schema/calls.js";
import { events } from "../../core/db/schema/events.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { expectBalanceIsLedgerSum, ledgerOf } from "../billing/support.js";
import { coreWithBusDown } from "../support/failing-bus.js";
import { coreWithCarrier } from "../support/failing-carrier.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall, drainEvents } from "../support/telephony.js";
import { pushToTurn } from "../support/turns.js";

// The transfers refused (core/calls/transfer.ts), each with nothing changed: the call's row, the
// balance and the ledger, no event written, and no carrier request (on the sandbox, the carrier's
// dial shows as `transfer` frames on the softphone; none arrives). The transfer timeout is long
// here, so a transfer to a number that does not answer stays dialing.
let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000", TRANSFER_TIMEOUT_MS: "600000" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());

async function liveCall(a: Api = api, key = account.apiKey) {
  const { agentId } = await agentWithNumber(a);
  const callId = await answeredCall(a, agentId);
  const phone = await Softphone.connect(service.baseUrl, callId, key);
  await drainEvents(a, agentId);
  return { agentId, callId, phone };
}

/** Everything a transfer could change, to compare before and after a refusal. */
async function snapshot(accountId: string, callId: string) {
  const [row] = await service.core.db.select().from(calls).where(eq(calls.callId, callId));
  const eventRows = await service.core.db.select({ type: events.eventType }).from(events).where(eq(events.accountId, accountId));
  return { call: row, ledger: await ledgerOf(service.core, accountId), events: eventRows.map((e) => e.type).sort() };
}

const noTransferFrame = (phone: Softphone) => expect(phone.frames.filter((f) => f.type === "transfer")).toEqual([]);

describe("a transfer refused", () => {
  it("of an ended call: 410 call_ended, nothing changed", async () => {
    const { callId, phone } = await liveCall();
    expect((await api.post(`/v1/calls/${callId}/hangup`)).status).toBe(200);
    const before = await snapshot(account.accountId, callId);
    const res = await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155557777" });
    expect(res.status).toBe(410);
    expect(res.body.code).toBe("call_ended");
    expect(await snapshot(account.accountId, callId)).toEqual(before);
    noTransferFrame(phone);
  });

  it("of a call already being transferred: 409 transfer_in_progress, the first transfer untouched", async () => {
    const { callId, phone } = await liveCall();
    expect((await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155550002", mode: "warm" })).status).toBe(200);
    await phone.next((f) => f.type === "transfer" && f.status === "dialing");
    const before = await snapshot(account.accountId, callId);
    const res = await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155557777" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("transfer_in_progress");
    expect(res.body.detail).toContain("+14155550002");
    expect(await snapshot(account.accountId, callId)).toEqual(before);
    expect(phone.frames.filter((f) => f.type === "transfer")).toHaveLength(1);
  });

  it("to a number that is not E.164: 422 naming to_number, nothing changed", async () => {
    const { callId, phone } = await liveCall();
    const before = await snapshot(account.accountId, callId);
    for (const to_number of ["555-1234", "+0123", "", "+1415555012345678"]) {
      const res = await api.post(`/v1/calls/${callId}/transfer`, { to_number });
      expect(res.status).toBe(422);
      expect(res.body.errors.map((e: any) => e.field)).toEqual(["to_number"]);
    }
    const answer = await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155557777", mode: "hot" });
    expect(answer.status).toBe(422);
    expect(answer.body.errors.map((e: any) => e.field)).toEqual(["mode"]);
    const whisper = await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155557777", whisper: "cold calls have none" });
    expect(whisper.status).toBe(422);
    expect(whisper.body.errors.map((e: any) => e.field)).toEqual(["whisper"]);
    expect(await snapshot(account.accountId, callId)).toEqual(before);
    noTransferFrame(phone);
  });

  it("of another account's call: 404, its call untouched", async () => {
    const { callId, phone } = await liveCall();
    const other = await createAccount(service.core);
    const otherApi = new Api(service.baseUrl, other.apiKey);
    const before = await snapshot(account.accountId, callId);
    const res = await otherApi.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155557777" });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: "not_found", detail: `No call with id "${callId}" exists on this account.` });
    expect(await snapshot(account.accountId, callId)).toEqual(before);
    expect(await ledgerOf(service.core, other.accountId)).toHaveLength(1);
    noTransferFrame(phone);
  });

  it("with a balance that cannot pay the bridged leg's first minute: 402 before the carrier is asked", async () => {
    // After the number (1.15) and the call's first block (0.015): 0.01, short of the leg's 0.015 minute.
    const poor = await createAccount(service.core, undefined, { creditMicros: 1_150_000 + 15_000 + 10_000 });
    const poorApi = new Api(service.baseUrl, poor.apiKey);
    const { callId, phone } = await liveCall(poorApi, poor.apiKey);
    const turnId = await phone.say("A human, please.");
    const before = await snapshot(poor.accountId, callId);
    const res = await poorApi.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155557777" });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ code: "insufficient_balance", required: "0.015000", balance: "0.010000" });
    // As a turn's answer too: the text is not spoken and the turn stays open.
    const answer = await poorApi.post(
      `/v1/calls/${callId}/context`,
      { text: "Putting you through.", transfer_to: "+14155557777" },
      { query: { turn_id: turnId } },
    );
    expect(answer.status).toBe(402);
    expect(phone.frames.filter((f) => f.type === "speech")).toEqual([]);
    expect(await snapshot(poor.accountId, callId)).toEqual(before);
    await expectBalanceIsLedgerSum(service.core, poor.accountId);
    noTransferFrame(phone);
    // The turn is still the agent's to answer.
    expect((await poorApi.post(`/v1/calls/${callId}/context`, { text: "Sorry, I cannot." }, { query: { turn_id: turnId } })).status).toBe(200);
  });

  it("of a call not yet answered: 409 call_not_in_progress", async () => {
    const { agentId } = await agentWithNumber(api);
    const ringing = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550005" });
    expect(ringing.body.status).toBe("ringing");
    const before = await snapshot(account.accountId, ringing.body.call_id);
    const res = await api.post(`/v1/calls/${ringing.body.call_id}/transfer`, { to_number: "+14155557777" });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("call_not_in_progress");
    expect(await snapshot(account.accountId, ringing.body.call_id)).toEqual(before);
  });
});

describe("a refusal says why", () => {
  // Each refusal's detail names the call and what stands in the way, as the client reads it.
  const refusal = (callId: string, body: Record<string, unknown> = {}) => api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155557777", ...body });

  it("an ended call's names its status; a ringing call's says only a connected call can be transferred", async () => {
    const { callId } = await liveCall();
    await api.post(`/v1/calls/${callId}/hangup`);
    expect((await refusal(callId)).body.detail).toBe(`Call ${callId} has ended (completed); it cannot be transferred.`);
    const { agentId } = await agentWithNumber(api);
    const ringing = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550005" })).body.call_id;
    expect((await refusal(ringing)).body.detail).toBe(`Call ${ringing} is ringing; only a connected call can be transferred.`);
  });

  it("a transfer dialing names the number and the events to wait for; a bridged one says the agent has left", async () => {
    const { callId, phone } = await liveCall();
    await refusal(callId, { to_number: "+14155550002" });
    await phone.next((f) => f.type === "transfer" && f.status === "dialing");
    expect((await refusal(callId)).body.detail).toBe(
      `Call ${callId} is already being transferred to +14155550002; wait for call.transfer.answered or call.transfer.failed.`,
    );
    const bridged = await liveCall();
    await refusal(bridged.callId);
    await bridged.phone.next((f) => f.type === "transfer" && f.status === "answered");
    const res = await refusal(bridged.callId, { to_number: "+14155558888" });
    expect(res.body).toMatchObject({
      code: "transfer_in_progress",
      detail: `Call ${bridged.callId} has been handed to +14155557777; the agent no longer speaks on it.`,
    });
  });

  it("a whisper on a cold transfer is refused by the core too, naming the field", async () => {
    const { callId, phone } = await liveCall();
    const cold = transferCall(service.core, { accountId: account.accountId }, { callId, toNumber: "+14155557777", mode: "cold", whisper: "hi" });
    const message = "a whisper is spoken only in a warm transfer (mode: warm)";
    await expect(cold).rejects.toMatchObject({ code: "validation_error", detail: `whisper is refused: ${message}.`, errors: [{ field: "whisper", message }] });
    noTransferFrame(phone);
  });
});

describe("a transfer as a turn's answer, refused", () => {
  it("with a push token of another call: 401 invalid_token, by the route and by the core, nothing changed", async () => {
    const { callId, phone } = await liveCall();
    const other = await liveCall();
    const turnId = await phone.say("Transfer me.");
    const before = await snapshot(account.accountId, callId);
    const wrong = pushTokenFor(service.core, other.callId);
    const res = await pushToTurn(api, callId, turnId, { transfer_to: "+14155557777" }, wrong);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe('Bearer realm="agentline", error="invalid_token"');
    const invalid = { code: "unauthorized", detail: "The push token is not valid for this call." };
    await expect(checkTransfer(service.core, { pushToken: wrong }, callId)).rejects.toMatchObject(invalid);
    const request = { callId, toNumber: "+14155557777", mode: "cold" as const, answersTurn: turnId };
    await expect(transferCall(service.core, { pushToken: wrong }, request)).rejects.toMatchObject({
      ...invalid,
      headers: { "WWW-Authenticate": 'Bearer realm="agentline", error="invalid_token"' },
    });
    expect(await snapshot(account.accountId, callId)).toEqual(before);
    noTransferFrame(phone);
  });

  it("of a turn not on this call: 404 naming the turn; of a stale turn: 409 turn_stale; nothing changed", async () => {
    const { callId, phone } = await liveCall();
    const other = await liveCall();
    const elsewhere = await other.phone.say("I am on another call.");
    const first = await phone.say("Transfer me.");
    await phone.say("Actually, wait.");
    const before = await snapshot(account.accountId, callId);
    const foreign = await pushToTurn(api, callId, elsewhere, { transfer_to: "+14155557777" });
    expect(foreign.status).toBe(404);
    expect(foreign.body.detail).toBe(`No turn with id "${elsewhere}" exists on this account.`);
    const stale = await pushToTurn(api, callId, first, { transfer_to: "+14155557777" });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ code: "turn_stale", detail: `Turn ${first} is stale; answer the newer call.utterance instead.` });
    expect(await snapshot(account.accountId, callId)).toEqual(before);
    noTransferFrame(phone);
  });
});

describe("a transfer the carrier does not take", () => {
  it("fails at once: call.transfer.failed (failed), and a warm transfer's caller is back with the agent", async () => {
    const { agentId, callId, phone } = await liveCall();
    const { core, logged } = coreWithCarrier(service.core, { transferCall: () => Promise.reject(new Error("the carrier is down")) });
    const call = await transferCall(core, { accountId: account.accountId }, { callId, toNumber: "+14155557777", mode: "warm", whisper: "A lead." });
    expect(call).toMatchObject({ status: "in-progress", transfer_status: "failed", transferred_to: null });
    expect(logged).toEqual([["error", { err: expect.any(Error), call_id: callId }, "the carrier did not take the transfer"]]);
    const events = await drainEvents(api, agentId);
    expect(events.find((e) => e.event_type === "call.transfer.failed").payload).toMatchObject({ reason: "failed", returned_to_agent: true });
    expect(events.find((e) => e.event_type === "call.utterance").payload.text).toBe("[transfer failed: failed]");
    await phone.next((f) => f.type === "transfer" && f.status === "failed");
  });
});

describe("a transfer whose announcement cannot be sent", () => {
  it("is refused with nothing changed and the carrier never asked; a report of its outcome changes nothing either", async () => {
    const { callId, phone } = await liveCall();
    const before = await snapshot(account.accountId, callId);
    const dials: unknown[] = [];
    const { core } = coreWithCarrier(service.core, { transferCall: async (transfer) => void dials.push(transfer) });
    const down = coreWithBusDown(core, CALL_TRANSFER_CHANNEL);
    const request = { callId, toNumber: "+14155557777", mode: "cold" as const };
    await expect(transferCall(down.core, { accountId: account.accountId }, request)).rejects.toThrow("the bus cannot send");
    expect(dials).toEqual([]);
    expect(await snapshot(account.accountId, callId)).toEqual(before);
    noTransferFrame(phone);
    // …0002 does not answer: the transfer stays dialing, waiting for the carrier's report.
    expect((await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155550002" })).status).toBe(200);
    const dialing = await snapshot(account.accountId, callId);
    await expect(transferOutcome(down.core, callId, "answered")).rejects.toThrow("the bus cannot send");
    await expect(transferOutcome(down.core, callId, "busy")).rejects.toThrow("the bus cannot send");
    // Each announcement was part of its change's transaction, and went down with it.
    expect(down.attempts).toEqual([{ inTransaction: true }, { inTransaction: true }, { inTransaction: true }]);
    expect(await snapshot(account.accountId, callId)).toEqual(dialing);
    await phone.next((f) => f.type === "transfer" && f.status === "dialing");
    expect(phone.frames.filter((f) => f.type === "transfer").map((f) => f.status)).toEqual(["dialing"]);
  });
});

describe("a carrier's report that changes nothing", () => {
  it("about a call that has ended, a call that is not dialing, or no call at all", async () => {
    const { agentId, callId } = await liveCall();
    expect((await api.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155550002" })).status).toBe(200);
    expect((await api.post(`/v1/calls/${callId}/hangup`)).status).toBe(200);
    await drainEvents(api, agentId);
    const ended = await snapshot(account.accountId, callId);
    // The call's end failed the transfer still dialing.
    expect(ended.call!.transferStatus).toBe("failed");
    await transferOutcome(service.core, callId, "answered");
    await transferOutcome(service.core, callId, "busy");
    expect(await snapshot(account.accountId, callId)).toEqual(ended);

    const live = await liveCall();
    const untouched = await snapshot(account.accountId, live.callId);
    await transferOutcome(service.core, live.callId, "answered");
    expect(await snapshot(account.accountId, live.callId)).toEqual(untouched);
    await expect(transferOutcome(service.core, "call_none", "answered")).resolves.toBeUndefined();
    expect(await drainEvents(api, agentId)).toEqual([]);
  });
});
