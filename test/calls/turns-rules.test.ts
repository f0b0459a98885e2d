import { eq, sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cancelOpenTurn, claimFiller } from "../../core/calls/turns.js";
import { executeRows } from "../../core/db/database.js";
import { calls } from "../../core/db/schema/calls.js";
import { turns } from "../../core/db/schema/turns.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { statementsWaitingForALock } from "../support/postgres.js";
import { startReceiver } from "../support/receiver.js";
import { onPostgres, startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall, drainEvents } from "../support/telephony.js";

// The rules of a caller's turn that the hot path does not show: an agent on a webhook takes the
// transaction path of openTurn (not the one-trip SQL function), and the refusals, interruptions
// and filler claims are checked by calling the domain functions directly.

let service: TestService;
let account: TestAccount;
let api: Api;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  service = await startTestService({ env: { ALLOW_PRIVATE_WEBHOOKS: "1", TURN_TIMEOUT_MS: "60000", TURN_FILLER_TEXT: "One moment." } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());
beforeEach(async () => {
  receiver = await startReceiver(() => 202);
});
afterEach(() => receiver?.close());

/** An agent whose events go to a webhook (protocol 1 unless said), a live call to it and its softphone. */
async function webhookCall(hook: Record<string, unknown> = {}) {
  const { agentId } = await agentWithNumber(api);
  expect((await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, ...hook })).status).toBe(201);
  const callId = await answeredCall(api, agentId);
  const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
  return { agentId, callId, phone };
}

/** The call's transcript as [role, text] pairs. */
async function transcript(callId: string) {
  return (await api.get(`/v1/calls/${callId}/transcript`)).body.map((l: any) => [l.role, l.text]);
}

const push = (callId: string, turnId: string, body: Record<string, unknown>, key?: string) =>
  api.post(`/v1/calls/${callId}/context`, body, { query: { turn_id: turnId }, ...(key ? { key } : {}) });

describe("a turn of an agent on a webhook", () => {
  it("carries the same call.utterance a relay agent gets, and a second utterance makes the first turn stale", async () => {
    const { agentId, callId, phone } = await webhookCall();
    const first = await phone.say("What time do you open?");
    expect(first).toMatch(/^turn_/);
    const [opened] = await receiver.waitFor(1);
    // Protocol 1 posts the event itself: every live-turn field a runtime needs to answer.
    expect(opened!.body).toEqual({
      event_id: expect.stringMatching(/^evt_/),
      agent_id: agentId,
      account_id: account.accountId,
      event_type: "call.utterance",
      created_at: expect.any(String),
      payload: { call_id: callId, turn_id: first, text: "What time do you open?", input: "speech", from_number: expect.any(String), to_number: "+14155550142", is_owner_call: false },
      call_id: callId,
      turn_id: first,
      session_key: `agentline:${agentId}:${callId}`,
      conversation: [{ role: "user", text: "What time do you open?", timestamp: opened!.body.created_at }],
      conversation_omitted: 0,
      transcript_url: expect.stringContaining(`/v1/calls/${callId}/transcript`),
      push_context_url: expect.stringContaining(`/v1/calls/${callId}/context?turn_id=${first}`),
      push_token: expect.stringMatching(/^pt_/),
    });

    // Without protocol 2's supports_amend, more words are a new turn, and the old answer is refused.
    const second = await phone.say("And on Sundays?");
    expect(second).toMatch(/^turn_/);
    expect(second).not.toBe(first);
    const [, next] = await receiver.waitFor(2);
    expect(next!.body).toMatchObject({ turn_id: second, session_key: `agentline:${agentId}:${callId}` });
    expect(next!.body.conversation.map((l: any) => [l.role, l.text])).toEqual([
      ["user", "What time do you open?"],
      ["user", "And on Sundays?"],
    ]);
    const late = await push(callId, first, { text: "Nine to five." });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe("turn_stale");
    expect((await push(callId, second, { text: "Closed on Sundays." }, next!.body.push_token)).status).toBe(200);
    expect(await phone.next((f) => f.type === "speech")).toMatchObject({ text: "Closed on Sundays.", turn_id: second });
    expect(await transcript(callId)).toEqual([
      ["user", "What time do you open?"],
      ["user", "And on Sundays?"],
      ["assistant", "Closed on Sundays."],
    ]);
    phone.close();
  });

  it("with supports_amend, records the added words as the caller's in the transcript", async () => {
    const { callId, phone } = await webhookCall({ protocol: "service-relay/2", capabilities: ["supports_amend"] });
    const turn = await phone.say("I'd like to book a table");
    expect(await phone.say("for four people")).toBe(turn);
    const [amend] = await receiver.waitFor(1, (r) => r.body.type === "call.task.amend");
    const expected = [
      ["user", "I'd like to book a table"],
      ["user", "for four people"],
    ];
    expect(amend!.body.conversation.map((l: any) => [l.role, l.text])).toEqual(expected);
    expect(await transcript(callId)).toEqual(expected);
    phone.close();
  });

  it("refuses the caller's words when the call ended between the route look-up and the turn", async () => {
    const { callId } = await webhookCall();
    // A test transaction holds the call's row, so the utterance and then the hang-up queue behind
    // it in that order. Released, the utterance's first statement finds the call live and the agent
    // on a webhook; the hang-up then takes the row before the utterance's own transaction does.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const holder = service.core.db.transaction(async (tx) => {
      await tx.select().from(calls).where(eq(calls.callId, callId)).for("update");
      held();
      await gate;
    });
    await holding;
    const words = service.core.callEngine.callerUtterance(callId, "Hello?");
    await waitersOnTheCall(1);
    const hangup = service.core.callEngine.callStatus(callId, "completed", "caller");
    await waitersOnTheCall(2);
    release();
    await holder;
    const [said] = await Promise.allSettled([words, hangup]);
    expect(said.status).toBe("rejected");
    expect((said as PromiseRejectedResult).reason).toMatchObject({ code: "call_not_in_progress", detail: expect.stringContaining("is completed") });
    // No turn was opened on the ended call.
    const open = await executeRows<{ n: number }>(service.core.db, sql`select count(*)::int as n from turns where call_id = ${callId}`);
    expect(open[0]!.n).toBe(0);
  });
});

/**
 * Waits until n statements wait for a lock in this database (PostgreSQL). PGlite runs one
 * statement or transaction at a time, first come first served: a short pause queues them in order.
 */
async function waitersOnTheCall(n: number) {
  if (!onPostgres) return new Promise((resolve) => setTimeout(resolve, 100));
  return statementsWaitingForALock(service.core.db, n);
}

describe("the refusal of words on a call that is not connected", () => {
  it("names the call's status, or says it is unknown for no such call", async () => {
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    await api.post(`/v1/calls/${callId}/hangup`);
    const res = await api.post(`/v1/sandbox/calls/${callId}/say`, { text: "hello?" });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: "call_not_in_progress", detail: expect.stringContaining(`Call ${callId} is completed`) });
    // A carrier reporting words on a call the service never had.
    await expect(service.core.callEngine.callerUtterance("call_00000000000000000000000000", "hello?")).rejects.toMatchObject({
      code: "call_not_in_progress",
      detail: expect.stringContaining("is unknown"),
    });
  });
});

describe("an interruption", () => {
  it("cancels nothing, and says so, when no turn is open", async () => {
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    expect(await cancelOpenTurn(service.core, callId)).toBeNull();
    const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
    const turnId = await phone.say("Hello?");
    expect(await cancelOpenTurn(service.core, callId)).toBe(turnId);
    // The turn is cancelled now: a second interruption finds none.
    expect(await cancelOpenTurn(service.core, callId)).toBeNull();
    await drainEvents(api, agentId);
    phone.close();
  });
});

describe("the filler claim", () => {
  it("succeeds once for an open turn, and never for an answered one", async () => {
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
    const waiting = await phone.say("Can you check my order?");
    expect(await claimFiller(service.core, callId, waiting)).toBe("One moment.");
    // Another process's timer for the same turn: already filled.
    expect(await claimFiller(service.core, callId, waiting)).toBeNull();
    expect((await push(callId, waiting, { text: "It shipped." })).status).toBe(200);
    const answered = await phone.say("Thanks!");
    expect((await push(callId, answered, { text: "You're welcome." })).status).toBe(200);
    expect(await claimFiller(service.core, callId, answered)).toBeNull();
    expect(await transcript(callId)).toEqual([
      ["user", "Can you check my order?"],
      ["assistant", "One moment."],
      ["assistant", "It shipped."],
      ["user", "Thanks!"],
      ["assistant", "You're welcome."],
    ]);
    await drainEvents(api, agentId);
    phone.close();
  });

  it("waits for a transaction holding the call, and is not lost to it when that transaction then writes the turn", async () => {
    // An amend holds the call's row and then updates the turn. A claim that took the turn's row
    // first would wait for the call's row (its transcript line's foreign key) while the amend
    // waits for the turn's: a deadlock, which PostgreSQL broke by failing the claim, so the
    // filler was never spoken. Here a test transaction does what the amend does, in two steps.
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
    const turnId = await phone.say("I'd like to book a table");
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const amend = service.core.db.transaction(async (tx) => {
      await tx.select().from(calls).where(eq(calls.callId, callId)).for("update");
      held();
      await gate;
      await tx.update(turns).set({ text: "I'd like to book a table\nfor four" }).where(eq(turns.turnId, turnId));
    });
    await holding;
    const claim = claimFiller(service.core, callId, turnId);
    await waitersOnTheCall(1);
    release();
    const [amended, claimed] = await Promise.allSettled([amend, claim]);
    expect(amended.status).toBe("fulfilled");
    expect(claimed).toEqual({ status: "fulfilled", value: "One moment." });
    const [turn] = await service.core.db.select().from(turns).where(eq(turns.turnId, turnId));
    expect(turn).toMatchObject({ status: "open", text: "I'd like to book a table\nfor four", fillerSpokenAt: expect.any(Date) });
    expect(await transcript(callId)).toEqual([
      ["user", "I'd like to book a table"],
      ["assistant", "One moment."],
    ]);
    await drainEvents(api, agentId);
    phone.close();
  });
});
