import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyCall } from "../../core/billing/call-verification.js";
import { balanceOf, credit, tryCharge } from "../../core/billing/ledger.js";
import {
  meterTransfers,
  prepayTransferBlock,
  requireTransferMinute,
  settleTransferBilling,
  startTransferBilling,
} from "../../core/billing/transfer-billing.js";
import { calls } from "../../core/db/schema/calls.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";
import { callRow, coreAt, expectBalanceIsLedgerSum, ledgerOf } from "./support.js";

// The bridged leg's money on its own (core/billing/transfer-billing.ts), at the edges a whole
// transfer rarely reaches: a balance of exactly the first minute, a block only partly affordable,
// a leg longer than what was paid with too little left to pay it all. How a transfer is billed
// end to end is in test/calls/transfer.test.ts.

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const RATE = 100; // micros per second of the bridged leg

/** An account's in-progress call, its leg answered at `answeredAt` at RATE, and its balance set to `balance`. */
async function bridgedCall(balance: number, answeredAt = new Date("2030-01-01T00:00:00Z")) {
  const account = await createAccount(service.core);
  const api = new Api(service.baseUrl, account.apiKey);
  const { agentId } = await agentWithNumber(api);
  const callId = await answeredCall(api, agentId);
  const [call] = await service.core.db
    .update(calls)
    .set({ transferStatus: "bridged", transferAnsweredAt: answeredAt, transferRateMicrosPerSecond: RATE, transferChargedMicros: 0 })
    .where(eq(calls.callId, callId))
    .returning();
  await setBalance(account.accountId, balance);
  return { accountId: account.accountId, call: call! };
}

async function setBalance(accountId: string, target: number) {
  await service.core.db.transaction(async (tx) => {
    const now = await balanceOf(tx, accountId);
    const line = { accountId, category: "operator_credit" as const, description: "the test sets the balance", at: new Date() };
    if (target > now) await credit(tx, line, target - now);
    else if (target < now) await tryCharge(tx, line, now - target);
  });
}

const balance = (accountId: string) => service.core.db.transaction((tx) => balanceOf(tx, accountId));
const legLines = async (accountId: string) =>
  (await ledgerOf(service.core, accountId))
    .filter((row) => row.item === "call.transfer")
    .map((row) => ({ amount: row.amountMicros, quantity: row.quantity, description: row.description }));

describe("a transfer's first minute", () => {
  it("may start on a balance of exactly 60 s of the leg, not one micro less", async () => {
    const { accountId } = await bridgedCall(60 * RATE);
    await expect(service.core.db.transaction((tx) => requireTransferMinute(tx, accountId, RATE))).resolves.toBeUndefined();
    await setBalance(accountId, 60 * RATE - 1);
    await expect(service.core.db.transaction((tx) => requireTransferMinute(tx, accountId, RATE))).rejects.toMatchObject({
      code: "insufficient_balance",
      detail: expect.stringMatching(/^A transfer's first minute/),
    });
  });
});

describe("prepaying the leg's next block", () => {
  it("buys only the whole seconds the balance affords, and says so on the ledger", async () => {
    const { accountId, call } = await bridgedCall(25 * RATE + 50);
    const from = call.transferAnsweredAt!;
    expect(await service.core.db.transaction((tx) => prepayTransferBlock(service.core, tx, call, from))).toBe(25);
    expect(await balance(accountId)).toBe(50);
    expect(await legLines(accountId)).toEqual([{ amount: -25 * RATE, quantity: 25, description: "25 s of transferred (outbound) talk time, prepaid" }]);
    expect(await callRow(service.core, call.callId)).toMatchObject({ transferPaidUntil: new Date(from.getTime() + 25_000), transferChargedMicros: 25 * RATE });
    await expectBalanceIsLedgerSum(service.core, accountId);
  });

  it("buys nothing, and charges nothing, when not one second is affordable or the leg is free", async () => {
    const { accountId, call } = await bridgedCall(RATE - 1);
    expect(await service.core.db.transaction((tx) => prepayTransferBlock(service.core, tx, call, call.transferAnsweredAt!))).toBe(0);
    expect(
      await service.core.db.transaction((tx) => prepayTransferBlock(service.core, tx, { ...call, transferRateMicrosPerSecond: 0 }, call.transferAnsweredAt!)),
    ).toBe(0);
    expect(await legLines(accountId)).toEqual([]);
    expect(await balance(accountId)).toBe(RATE - 1);
  });
});

describe("starting the leg's billing when the person answers", () => {
  it("prepays the first block from the answer", async () => {
    const { accountId, call } = await bridgedCall(100 * RATE);
    await service.core.db.transaction((tx) => startTransferBilling(service.core, tx, call));
    expect(await callRow(service.core, call.callId)).toMatchObject({
      transferPaidUntil: new Date(call.transferAnsweredAt!.getTime() + 60_000),
      transferChargedMicros: 60 * RATE,
    });
    expect(await balance(accountId)).toBe(40 * RATE);
  });

  it("with nothing affordable, marks the leg paid up to its answer, so the meter ends the call", async () => {
    const { accountId, call } = await bridgedCall(RATE - 1);
    await service.core.db.transaction((tx) => startTransferBilling(service.core, tx, call));
    expect(await callRow(service.core, call.callId)).toMatchObject({ transferPaidUntil: call.transferAnsweredAt, transferChargedMicros: 0 });
    expect(await legLines(accountId)).toEqual([]);
  });

  it("leaves a free leg unmetered", async () => {
    const { accountId, call } = await bridgedCall(100 * RATE);
    const free = { ...call, transferRateMicrosPerSecond: 0 };
    await service.core.db.transaction((tx) => startTransferBilling(service.core, tx, free));
    expect((await callRow(service.core, call.callId)).transferPaidUntil).toBeNull();
    expect(await legLines(accountId)).toEqual([]);
  });
});

describe("verifying a live call with a bridged leg", () => {
  it("counts the leg's prepaid block beside the call's own running total", async () => {
    const { accountId, call } = await bridgedCall(100 * RATE);
    await service.core.db.transaction((tx) => prepayTransferBlock(service.core, tx, call, call.transferAnsweredAt!));
    const verified = await verifyCall(service.core, accountId, call.callId);
    expect(verified).toMatchObject({ status: "in-progress", expected_charge: null, agrees: true });
    expect(Math.round(Number(verified.charged) * 1e6)).toBe(call.chargedMicros + 60 * RATE);
    expect(verified.ledger.map((row) => row.item)).toContain("call.transfer");
  });
});

describe("settling the leg when the call ends", () => {
  /**
   * A leg prepaid from its answer with `balance`, the balance then set to `left` (when given), and
   * settled as ended `legMs` after the answer: the settled row, and the leg's ledger lines before.
   */
  async function settledLeg(balance: number, legMs: number, left?: number) {
    const { accountId, call } = await bridgedCall(balance);
    const answered = call.transferAnsweredAt!;
    await service.core.db.transaction((tx) => prepayTransferBlock(service.core, tx, call, answered));
    if (left !== undefined) await setBalance(accountId, left);
    const paid = await callRow(service.core, call.callId);
    const linesBefore = (await legLines(accountId)).length;
    const settled = await service.core.db.transaction((tx) =>
      settleTransferBilling(service.core, tx, { ...paid, endedAt: new Date(answered.getTime() + legMs) }),
    );
    return { accountId, settled, linesBefore };
  }

  it("refunds the prepaid seconds the leg did not use", async () => {
    const { accountId, settled } = await settledLeg(60 * RATE, 40_500);
    expect(settled.transferChargedMicros).toBe(41 * RATE);
    expect((await legLines(accountId)).at(-1)).toEqual({
      amount: 19 * RATE,
      quantity: -19,
      description: "19 s of prepaid transferred talk time not used, refunded",
    });
    expect(await balance(accountId)).toBe(19 * RATE);
    await expectBalanceIsLedgerSum(service.core, accountId);
  });

  it("charges the seconds past what was paid while the balance lasts, and bills only those", async () => {
    const { accountId, settled } = await settledLeg(10 * RATE, 30_000, 5 * RATE + 1);
    expect(settled.transferChargedMicros).toBe(15 * RATE);
    expect((await legLines(accountId)).at(-1)).toEqual({ amount: -5 * RATE, quantity: 5, description: "5 s of transferred (outbound) talk time" });
    expect(await balance(accountId)).toBe(1);
    await expectBalanceIsLedgerSum(service.core, accountId);
  });

  it("charges every second past what was paid when the balance has them", async () => {
    const { accountId, settled } = await settledLeg(10 * RATE, 30_000, 100 * RATE);
    expect(settled.transferChargedMicros).toBe(30 * RATE);
    expect((await legLines(accountId)).at(-1)).toEqual({ amount: -20 * RATE, quantity: 20, description: "20 s of transferred (outbound) talk time" });
    expect(await balance(accountId)).toBe(80 * RATE);
    await expectBalanceIsLedgerSum(service.core, accountId);
  });

  it("writes no line when the balance affords not one second past what was paid", async () => {
    const { accountId, settled, linesBefore } = await settledLeg(10 * RATE, 30_000, RATE - 1);
    expect(settled.transferChargedMicros).toBe(10 * RATE);
    expect(await legLines(accountId)).toHaveLength(linesBefore);
    expect(await balance(accountId)).toBe(RATE - 1);
  });

  it("leaves a call that has not ended as it is", async () => {
    const { accountId, call } = await bridgedCall(100 * RATE);
    const settled = await service.core.db.transaction((tx) => settleTransferBilling(service.core, tx, { ...call, endedAt: null }));
    expect(settled).toEqual({ ...call, endedAt: null });
    expect(await legLines(accountId)).toEqual([]);
  });

  it("charges nothing more when the leg took exactly what was paid", async () => {
    const { accountId, settled, linesBefore } = await settledLeg(10 * RATE, 10_000);
    expect(settled.transferChargedMicros).toBe(10 * RATE);
    expect(await legLines(accountId)).toHaveLength(linesBefore);
  });
});

describe("a transfer still dialing when the call ends", () => {
  it("is a failed one, and costs nothing", async () => {
    const { accountId, call } = await bridgedCall(100 * RATE);
    const dialing = { ...call, transferStatus: "dialing" as const, transferAnsweredAt: null, endedAt: new Date("2030-01-01T00:01:00Z") };
    const settled = await service.core.db.transaction((tx) => settleTransferBilling(service.core, tx, dialing));
    expect(settled.transferStatus).toBe("failed");
    expect((await callRow(service.core, call.callId)).transferStatus).toBe("failed");
    expect(await legLines(accountId)).toEqual([]);
    expect(await balance(accountId)).toBe(100 * RATE);
  });
});

describe("the bridged legs' meter", () => {
  // The meter is run with its own clock, far past the real one, so the service's own billing pass
  // (on the real clock) never takes these legs first.
  const T = new Date("2031-06-01T00:00:00Z").getTime();
  const meterAt = (at: number) => meterTransfers(coreAt(service.core, new Date(at)));
  async function legPaidUntil(balance: number, paidUntil: number) {
    const { accountId, call } = await bridgedCall(balance, new Date(paidUntil - 60_000));
    await service.core.db
      .update(calls)
      .set({ transferPaidUntil: new Date(paidUntil) })
      .where(eq(calls.callId, call.callId));
    return { accountId, callId: call.callId };
  }

  it("buys the next block of a leg about to run out, and ends a leg whose paid time ran out unpaid", async () => {
    const topped = await legPaidUntil(100 * RATE, T + 3_000);
    const broke = await legPaidUntil(RATE - 1, T - 1_000);
    const soonBroke = await legPaidUntil(RATE - 1, T + 3_000);
    const outNow = await legPaidUntil(RATE - 1, T);
    const lateButPaid = await legPaidUntil(100 * RATE, T - 1_000);
    const later = await legPaidUntil(100 * RATE, T + 10_000);
    const mine = new Set([topped.callId, broke.callId, outNow.callId, soonBroke.callId, lateButPaid.callId, later.callId]);

    const exhausted = (await meterAt(T)).filter((leg) => mine.has(leg.callId));
    // Only the legs whose paid time is over (to this very moment) are to be ended, when their money ran out.
    expect(exhausted).toEqual([
      { callId: broke.callId, endAt: new Date(T - 1_000) },
      { callId: outNow.callId, endAt: new Date(T) },
    ]);
    expect(await callRow(service.core, topped.callId)).toMatchObject({ transferPaidUntil: new Date(T + 63_000), transferChargedMicros: 60 * RATE });
    expect(await balance(topped.accountId)).toBe(40 * RATE);
    // A leg past its paid time that can pay again goes on, its block counted from where it ran out.
    expect((await callRow(service.core, lateButPaid.callId)).transferPaidUntil).toEqual(new Date(T + 59_000));
    // Not yet due (more than the look-ahead away): untouched.
    expect((await callRow(service.core, later.callId)).transferPaidUntil).toEqual(new Date(T + 10_000));
    expect(await legLines(later.accountId)).toEqual([]);
    expect((await callRow(service.core, soonBroke.callId)).transferPaidUntil).toEqual(new Date(T + 3_000));
  });
});
