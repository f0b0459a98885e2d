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
import { pushToTurn, transcriptLines, webhookCall } from "../support/turns.js";

// A caller's turn (core/calls/turns.ts): what the caller says or keys opens one, words on a call
// that is not connected are refused, an interruption cancels the open turn, and a late answer gets
// the filler once. Some rules are checked by calling the domain functions directly, as a carrier
// or a timer in another process would. Answering a turn is in push-context.test.ts, a turn made
// stale by a newer one in turn-staleness.test.ts, the filler's timer in call-engine.test.ts.

let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService({ env: { ALLOW_PRIVATE_WEBHOOKS: "1", TURN_TIMEOUT_MS: "60000", TURN_FILLER_TEXT: "One moment." } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());

/**
 * Waits until n statements wait for a lock in this database (PostgreSQL). PGlite runs one
 * statement or transaction at a time, first come first served: a short pause queues them in order.
 */
async function waitersOnTheCall(n: number) {
  if (!onPostgres) return new Promise((resolve) => setTimeout(resolve, 100));
  return statementsWaitingForALock(service.core.db, n);
}

describe("context pushes", () => {
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

describe("a turn of an agent on a webhook", () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeEach(async () => {
    receiver = await startReceiver(() => 202);
  });
  afterEach(() => receiver?.close());

  it("refuses the caller's words when the call ended between the route look-up and the turn", async () => {
    const { callId } = await webhookCall(api, receiver.url);
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

describe("the filler claim", () => {
  it("succeeds once for an open turn, and never for an answered one", async () => {
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
    const waiting = await phone.say("Can you check my order?");
    expect(await claimFiller(service.core, callId, waiting)).toBe("One moment.");
    // Another process's timer for the same turn: already filled.
    expect(await claimFiller(service.core, callId, waiting)).toBeNull();
    expect((await pushToTurn(api, callId, waiting, { text: "It shipped." })).status).toBe(200);
    const answered = await phone.say("Thanks!");
    expect((await pushToTurn(api, callId, answered, { text: "You're welcome." })).status).toBe(200);
    expect(await claimFiller(service.core, callId, answered)).toBeNull();
    expect(await transcriptLines(api, callId)).toEqual([
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
    expect(await transcriptLines(api, callId)).toEqual([
      ["user", "I'd like to book a table"],
      ["assistant", "One moment."],
    ]);
    await drainEvents(api, agentId);
    phone.close();
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
