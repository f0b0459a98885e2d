import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { meterCalls } from "../../core/billing/call-billing.js";
import { tryCharge } from "../../core/billing/ledger.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { statementsWaitingForALock } from "../support/postgres.js";
import { onPostgres, startTestService, type TestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";
import { expectBalanceIsLedgerSum, ledgerOf, manualClock } from "./support.js";

// The edges of call billing that the mutation run (npm run mutate) found unpinned: the first
// minute's exact boundary, the moment paid time is over, a meter that ran late, a call answered
// with nothing left to pay, and free calls. Outbound talk costs 250 µ$ a second (0.015/min), a
// block is 60 s; after a local number (1.15) the account holds what each test gives it.
let service: TestService;
let free: TestService;

beforeAll(async () => {
  [service, free] = await Promise.all([
    startTestService({ env: { BILLING_INTERVAL_MS: "3600000", TURN_TIMEOUT_MS: "60000" } }),
    startTestService({ env: { BILLING_INTERVAL_MS: "3600000", TURN_TIMEOUT_MS: "60000", RATE_CALL_OUTBOUND_PER_MINUTE_USD: "0" } }),
  ]);
});
afterAll(async () => {
  await Promise.all([service?.stop(), free?.stop()]);
});
afterEach(() => {
  service.core.now = () => new Date();
  free.core.now = () => new Date();
});

const NUMBER = 1_150_000;
const RATE = 250;

async function callWith(talkMicros: number, to = "+14155550142", on = service) {
  const account = await createAccount(on.core, undefined, { creditMicros: NUMBER + talkMicros });
  const api = new Api(on.baseUrl, account.apiKey);
  const { agentId } = await agentWithNumber(api);
  const placed = await api.post("/v1/calls", { agent_id: agentId, to_number: to });
  return { account, api, placed, call: placed.body };
}

const callLines = async (on: TestService, accountId: string, callId: string) =>
  (await ledgerOf(on.core, accountId)).filter((row) => row.callId === callId).map((row) => [row.amountMicros, row.quantity, row.description]);

describe("the first minute", () => {
  it("lets a call start on a balance of exactly its first minute, and refuses one micro-dollar less, saying why", async () => {
    const exact = await callWith(60 * RATE);
    expect(exact.placed.status).toBe(201);
    const short = await callWith(60 * RATE - 1);
    expect(short.placed.status).toBe(402);
    expect(short.placed.body.detail).toContain("first minute");
  });
});

describe("settling a call", () => {
  it("writes what each ledger line is for: the block prepaid, and the seconds refunded", async () => {
    const clock = manualClock(service.core);
    const { account, api, call } = await callWith(5_000_000);
    clock.set(new Date(Date.parse(call.answered_at) + 10_000));
    await api.post(`/v1/calls/${call.call_id}/hangup`);
    expect(await callLines(service, account.accountId, call.call_id)).toEqual([
      [-60 * RATE, 60, "60 s of outbound talk time, prepaid"],
      [50 * RATE, -50, "50 s of prepaid talk time not used, refunded"],
    ]);
  });

  it("writes no line beyond the block for a call that lasted exactly the block", async () => {
    const clock = manualClock(service.core);
    const { account, api, call } = await callWith(5_000_000);
    clock.set(new Date(Date.parse(call.answered_at) + 60_000));
    const ended = (await api.post(`/v1/calls/${call.call_id}/hangup`)).body;
    expect(ended).toMatchObject({ billed_seconds: 60, charge: "0.015000" });
    expect(await callLines(service, account.accountId, call.call_id)).toEqual([[-60 * RATE, 60, "60 s of outbound talk time, prepaid"]]);
  });

  it("charges seconds past the block when the meter ran late, while the balance lasts, and no more", async () => {
    const clock = manualClock(service.core);
    // The block (60 s) and then 10 s more; the call lasts 100 s with no meter run in between.
    const { account, api, call } = await callWith(70 * RATE);
    clock.set(new Date(Date.parse(call.answered_at) + 100_000));
    const ended = (await api.post(`/v1/calls/${call.call_id}/hangup`)).body;
    expect(ended).toMatchObject({ duration_seconds: 100, billed_seconds: 70, charge: ((70 * RATE) / 1e6).toFixed(6) });
    expect(await callLines(service, account.accountId, call.call_id)).toEqual([
      [-60 * RATE, 60, "60 s of outbound talk time, prepaid"],
      [-10 * RATE, 10, "10 s of outbound talk time"],
    ]);
    await expectBalanceIsLedgerSum(service.core, account.accountId);
  });

  it("writes no empty line when the meter ran late and nothing is left to pay with", async () => {
    const clock = manualClock(service.core);
    const { account, api, call } = await callWith(60 * RATE);
    clock.set(new Date(Date.parse(call.answered_at) + 90_000));
    const ended = (await api.post(`/v1/calls/${call.call_id}/hangup`)).body;
    expect(ended).toMatchObject({ duration_seconds: 90, billed_seconds: 60, charge: "0.015000" });
    expect(await callLines(service, account.accountId, call.call_id)).toEqual([[-60 * RATE, 60, "60 s of outbound talk time, prepaid"]]);
  });
});

describe("the meter", () => {
  it("returns nothing for calls still paid for, and a call whose paid time ends exactly now, at that moment", async () => {
    const clock = manualClock(service.core);
    // The block, and not one second more.
    const { api, call } = await callWith(60 * RATE);
    const paidUntil = Date.parse(call.answered_at) + 60_000;
    clock.set(new Date(paidUntil - 1_000));
    expect((await meterCalls(service.core)).filter((due) => due.callId === call.call_id)).toEqual([]);
    clock.set(new Date(paidUntil));
    expect((await meterCalls(service.core)).filter((due) => due.callId === call.call_id)).toEqual([{ callId: call.call_id, endAt: new Date(paidUntil) }]);
    await service.core.billing.runOnce();
    expect((await api.get(`/v1/calls/${call.call_id}`)).body).toMatchObject({ status: "completed", ended_by: "service", billed_seconds: 60 });
  });

  it.skipIf(!onPostgres)("prepays each due call in a transaction of its own: a call already paid is let go while the next one waits", async () => {
    const clock = manualClock(service.core);
    const [first, second] = [await callWith(5_000_000), await callWith(5_000_000)];
    const sql = service.core.dbHandle.postgresClient!;
    // Both due at the next pass, the first sooner; the meter takes the sooner first.
    const due = clock.now().getTime() + 3_600_000;
    await sql`update calls set paid_until = ${new Date(due).toISOString()} where call_id = ${first.call.call_id}`;
    await sql`update calls set paid_until = ${new Date(due + 1_000).toISOString()} where call_id = ${second.call.call_id}`;
    clock.set(new Date(due - 2_000));
    // The second call's account is held (a top-up, say): its prepayment waits for it.
    let release!: () => void;
    let held!: () => void;
    const holding = sql.begin(async (tx) => {
      await tx`select 1 from accounts where account_id = ${second.account.accountId} for update`;
      held();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await new Promise<void>((resolve) => (held = resolve));
    const metering = meterCalls(service.core);
    try {
      await statementsWaitingForALock(service.core.db, 1);
      // The first call's block is bought and committed, and its row is free for a live turn.
      const [row] =
        await sql`select paid_until > ${new Date(due).toISOString()}::timestamptz as moved from calls where call_id = ${first.call.call_id} for update nowait`;
      expect(row).toEqual({ moved: true });
    } finally {
      release();
      await holding;
    }
    await metering;
    const [after] =
      await sql`select paid_until > ${new Date(due + 1_000).toISOString()}::timestamptz as moved from calls where call_id = ${second.call.call_id}`;
    expect(after).toEqual({ moved: true });
  });

  it("returns an empty list when no call is due", async () => {
    // A clock far behind every call's paid time: none is due, nothing is returned.
    manualClock(service.core, new Date("2000-01-01T00:00:00.000Z"));
    expect(await meterCalls(service.core)).toEqual([]);
  });

  it("buys nothing and writes no line for a call that cannot pay one more second, and ends it when its time is up", async () => {
    const clock = manualClock(service.core);
    const { account, api, call } = await callWith(60 * RATE + RATE - 1);
    clock.set(new Date(Date.parse(call.answered_at) + 58_000));
    await service.core.billing.runOnce();
    expect(await callLines(service, account.accountId, call.call_id)).toEqual([[-60 * RATE, 60, "60 s of outbound talk time, prepaid"]]);
    expect((await api.get(`/v1/calls/${call.call_id}`)).body.status).toBe("in-progress");
    clock.set(new Date(Date.parse(call.answered_at) + 61_000));
    await service.core.billing.runOnce();
    expect((await api.get(`/v1/calls/${call.call_id}`)).body).toMatchObject({ status: "completed", billed_seconds: 60 });
    expect((await api.get("/v1/billing/balance")).body.balance).toBe(((RATE - 1) / 1e6).toFixed(6));
  });

  it("ends a call answered when the balance could no longer pay a second, at its answer, charging nothing", async () => {
    const clock = manualClock(service.core);
    // ...0005 rings until the carrier reports the answer; meanwhile the money goes elsewhere.
    const { account, api, call } = await callWith(60 * RATE, "+14155550005");
    expect(call.status).not.toBe("in-progress");
    await service.core.db.transaction((tx) =>
      tryCharge(tx, { accountId: account.accountId, category: "operator_credit", description: "spent elsewhere", at: clock.now() }, 60 * RATE),
    );
    await service.core.callEngine.callStatus(call.call_id, "in-progress");
    const answeredAt = (await api.get(`/v1/calls/${call.call_id}`)).body.answered_at;
    clock.advance(1_000);
    await service.core.billing.runOnce();
    const ended = (await api.get(`/v1/calls/${call.call_id}`)).body;
    expect(ended).toMatchObject({ status: "completed", ended_by: "service", billed_seconds: 0, charge: "0.000000" });
    expect(ended.ended_at).toBe(answeredAt);
    expect(await callLines(service, account.accountId, call.call_id)).toEqual([]);
  });
});

describe("free calls (a rate of 0)", () => {
  it("are never metered or charged: no ledger line, the talk time billed at 0", async () => {
    const clock = manualClock(free.core);
    const { account, api, call } = await callWith(0, "+14155550142", free);
    expect(call.status).toBe("in-progress");
    for (const seconds of [30, 90, 200]) {
      clock.set(new Date(Date.parse(call.answered_at) + seconds * 1000));
      await free.core.billing.runOnce();
      expect((await api.get(`/v1/calls/${call.call_id}`)).body.status).toBe("in-progress");
    }
    const ended = (await api.post(`/v1/calls/${call.call_id}/hangup`)).body;
    expect(ended).toMatchObject({ duration_seconds: 200, billed_seconds: 200, charge: "0.000000" });
    expect(await callLines(free, account.accountId, call.call_id)).toEqual([]);
    expect((await api.get(`/v1/billing/verify/${call.call_id}`)).body).toMatchObject({ agrees: true, charged: "0.000000" });
  });
});
