import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadCallById } from "../../core/calls/call-records.js";
import { applyCallStatus, CALL_STATUS_CHANNEL } from "../../core/calls/call-status.js";
import { endCall } from "../../core/calls/end-call.js";
import { turns } from "../../core/db/schema/turns.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { ledgerOf, manualClock } from "../billing/support.js";
import { coreWithBusDown } from "../support/failing-bus.js";
import { messageType } from "../support/protocol2.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber, answeredCall, drainEvents } from "../support/telephony.js";

// A call moving on (core/calls/call-status.ts, end-call.ts): what a carrier's measured talk time
// proves, how the duration and the bill are counted, who ended a call nobody named, the protocol-2
// session of an outbound call, and what the end of an owner's call tells the agent; and a call
// the service ends itself, which ends when its paid time did, not when the meter noticed, and is
// left as it is if it ended meanwhile. Carrier reports are applied by calling applyCallStatus as
// the carrier adapters do.
let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  // The meter is kept out of the way: these tests move the clock by hand.
  service = await startTestService({ env: { ALLOW_PRIVATE_WEBHOOKS: "1", TURN_TIMEOUT_MS: "60000", BILLING_INTERVAL_MS: "3600000" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());
afterEach(() => {
  service.core.now = () => new Date();
});

/** An outbound call left ringing (the sandbox never answers +14155550005). */
async function ringingCall() {
  const { agentId } = await agentWithNumber(api);
  const placed = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550005" });
  expect(placed.body.status).toBe("ringing");
  return { agentId, callId: placed.body.call_id as string };
}

describe("a carrier's report of the end", () => {
  it("takes a completion with measured talk time on a call never seen answered as answered that long before the end", async () => {
    const { agentId, callId } = await ringingCall();
    const clock = manualClock(service.core, new Date());
    const ended = await applyCallStatus(service.core, callId, "completed", "caller", { durationSeconds: 42 });
    // The answer report was lost: the talk time places the answer 42 s before the end.
    const answeredAt = new Date(clock.now().getTime() - 42_000).toISOString();
    expect(ended).toMatchObject({ status: "completed", durationSeconds: 42, billedSeconds: 42 });
    expect(ended!.answeredAt!.toISOString()).toBe(answeredAt);
    expect((await api.get(`/v1/calls/${callId}`)).body).toMatchObject({ status: "completed", answered_at: answeredAt, ended_at: clock.now().toISOString() });
    const [completed] = await drainEvents(api, agentId);
    expect(completed.payload).toMatchObject({ status: "completed", answered_at: answeredAt, duration_seconds: 42, billed_seconds: 42, currency: "USD" });
  });

  it("does not take a measured time on a call that ended busy as an answer: no talk, nothing billed", async () => {
    const { agentId, callId } = await ringingCall();
    const ended = await applyCallStatus(service.core, callId, "busy", "carrier", { durationSeconds: 5 });
    expect(ended).toMatchObject({ status: "busy", answeredAt: null, durationSeconds: 0, billedSeconds: 0, chargedMicros: 0 });
    expect((await drainEvents(api, agentId))[0].payload).toMatchObject({ status: "busy", answered_at: null, duration_seconds: 0, charge: "0.000000" });
  });

  it("records an end reported without saying who ended it as the carrier's", async () => {
    const { callId } = await ringingCall();
    const ended = await applyCallStatus(service.core, callId, "no-answer");
    expect(ended).toMatchObject({ status: "no-answer", endedBy: "carrier" });
    expect((await api.get(`/v1/calls/${callId}`)).body.ended_by).toBe("carrier");
  });
});

describe("a report whose announcement cannot be sent", () => {
  it("changes nothing (the call in progress, its bill, its events) until the carrier's retry applies it", async () => {
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    await drainEvents(api, agentId);
    const before = await loadCallById(service.core.db, callId);
    const ledger = await ledgerOf(service.core, account.accountId);
    const down = coreWithBusDown(service.core, CALL_STATUS_CHANNEL);
    await expect(applyCallStatus(down.core, callId, "completed", "caller")).rejects.toThrow("the bus cannot send");
    expect(down.attempts).toEqual([{ inTransaction: true }]);
    expect(await loadCallById(service.core.db, callId)).toEqual(before);
    expect(await ledgerOf(service.core, account.accountId)).toEqual(ledger);
    expect(await drainEvents(api, agentId)).toEqual([]);
    expect((await applyCallStatus(service.core, callId, "completed", "caller"))?.status).toBe("completed");
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).toContain("call.completed");
  });
});

describe("talk time and its bill", () => {
  it("prepays a block of talk time at the answer, before the call ends", async () => {
    const payer = await createAccount(service.core);
    const papi = new Api(service.baseUrl, payer.apiKey);
    const { agentId } = await agentWithNumber(papi);
    const callId = await answeredCall(papi, agentId);
    // Outbound talk is 250 µ$ a second; the block is 60 s. Without it a call could talk unpaid.
    const lines = (await ledgerOf(service.core, payer.accountId)).filter((l) => l.callId === callId);
    expect(lines.map((l) => [l.amountMicros, l.quantity])).toEqual([[-15_000, 60]]);
  });

  it("counts the duration from the answer to the end in whole seconds, rounding up, and bills that", async () => {
    const clock = manualClock(service.core, new Date());
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    clock.advance(42_300);
    const hung = await api.post(`/v1/calls/${callId}/hangup`);
    expect(hung.body).toMatchObject({ status: "completed", duration_seconds: 43, billed_seconds: 43, charge: "0.010750", currency: "USD" });
    const [completed] = await drainEvents(api, agentId);
    expect(completed.payload).toMatchObject({
      duration_seconds: 43,
      billed_seconds: 43,
      charge: "0.010750",
      currency: "USD",
      answered_at: hung.body.answered_at,
    });
  });
});

describe("a call's end and its open turn", () => {
  it("gives up the turn still waiting for an answer, closed at the end of the call", async () => {
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    const { turn_id: turnId } = (await api.post(`/v1/sandbox/calls/${callId}/say`, { text: "Are you there?" })).body;
    const hung = await api.post(`/v1/calls/${callId}/hangup`);
    const [turn] = await service.core.db.select().from(turns).where(eq(turns.turnId, turnId));
    expect(turn).toMatchObject({ status: "abandoned" });
    expect(turn!.closedAt!.toISOString()).toBe(hung.body.ended_at);
  });
});

describe("hanging a call up from the service", () => {
  it("ends it at the time given, not at the time it is recorded", async () => {
    const clock = manualClock(service.core, new Date());
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    const paidUntil = new Date(clock.now().getTime() + 30_000);
    clock.advance(45_000);
    await endCall(service.core, (await loadCallById(service.core.db, callId))!, "service", paidUntil);
    expect((await api.get(`/v1/calls/${callId}`)).body).toMatchObject({
      status: "completed",
      ended_by: "service",
      ended_at: paidUntil.toISOString(),
      duration_seconds: 30,
    });
  });

  it("leaves a call that ended meanwhile as it is, without asking the carrier again", async () => {
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    const stale = (await loadCallById(service.core.db, callId))!;
    await api.post(`/v1/sandbox/calls/${callId}/hangup`);
    const asked: unknown[] = [];
    const realHangup = service.core.carrier.dropCall;
    service.core.carrier.dropCall = async (call) => void asked.push(call);
    try {
      await endCall(service.core, stale, "agent");
    } finally {
      service.core.carrier.dropCall = realHangup;
    }
    expect(asked).toEqual([]);
    expect((await api.get(`/v1/calls/${callId}`)).body).toMatchObject({ status: "completed", ended_by: "caller" });
  });
});

describe("the protocol-2 session of an outbound call", () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeEach(async () => {
    receiver = await startReceiver(() => 202);
  });
  afterEach(() => receiver?.close());

  async function agentOnProtocol2(capabilities: string[]) {
    const { agentId } = await agentWithNumber(api);
    expect((await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, protocol: "service-relay/2", capabilities })).status).toBe(201);
    return agentId;
  }

  it("opens one session when the call is answered, with the briefing the runtime asked for, and ends it at the hang-up", async () => {
    const agentId = await agentOnProtocol2(["briefing"]);
    const callId = await answeredCall(api, agentId);
    const [start] = await receiver.waitFor(1, (r) => messageType(r) === "call.session.start");
    expect(start!.body).toMatchObject({ call_id: callId, agent_id: agentId, direction: "outbound", to_number: "+14155550142" });
    expect(start!.body.briefing).toMatchObject({ caller: { number: "+14155550142" } });
    await api.post(`/v1/calls/${callId}/hangup`);
    await receiver.waitFor(1, (r) => messageType(r) === "call.session.end");
    // The ringing before the answer and the end after it open no further session.
    expect(receiver.requests.filter((r) => messageType(r) === "call.session.start")).toHaveLength(1);
  });

  it("opens no session for a call that never connected (busy)", async () => {
    const agentId = await agentOnProtocol2([]);
    await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550001" });
    await receiver.waitFor(1, (r) => messageType(r) === "call.busy");
    // A session start would have been queued ahead of the busy event; give a stray one time anyway.
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.requests.map(messageType)).toEqual(["call.busy"]);
  });
});

describe("the end of the owner's call", () => {
  const OWNER = "+14155550111";

  it("gives the agent the owner's lines as instructions, not the agent's own replies", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api, { owner_number: OWNER });
    const callId = (await api.post("/v1/sandbox/inbound/calls", { to_number: phoneNumber, from_number: OWNER })).body.call_id;
    const first = (await api.post(`/v1/sandbox/calls/${callId}/say`, { text: "Book a table for four." })).body.turn_id;
    expect((await api.post(`/v1/calls/${callId}/context`, { text: "For what time?" }, { query: { turn_id: first } })).status).toBe(200);
    await api.post(`/v1/sandbox/calls/${callId}/say`, { text: "Eight o'clock." });
    await api.post(`/v1/sandbox/calls/${callId}/hangup`);
    const task = (await drainEvents(api, agentId)).find((e) => e.event_type === "call.owner_task");
    expect(task.payload.instructions).toEqual(["Book a table for four.", "Eight o'clock."]);
    expect(task.payload.transcript.map((l: any) => l.role)).toEqual(["user", "assistant", "user"]);
  });

  it("makes no task of an owner's call that failed rather than completed", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api, { owner_number: OWNER });
    const callId = (await api.post("/v1/sandbox/inbound/calls", { to_number: phoneNumber, from_number: OWNER })).body.call_id;
    await api.post(`/v1/sandbox/calls/${callId}/say`, { text: "Book a table for" });
    // The line dropped mid-sentence: what was said is not a complete instruction.
    await applyCallStatus(service.core, callId, "failed", "carrier");
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).toEqual(["call.received", "call.utterance", "call.failed"]);
  });
});
