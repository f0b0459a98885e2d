import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceOf, charge, credit, type LedgerLine, tryCharge } from "../../core/billing/ledger.js";
import type { Transaction } from "../../core/db/database.js";
import type { AppError } from "../../core/errors.js";
import { createAccount } from "../../harness/accounts.js";
import { startTestService, type TestService } from "../support/service.js";
import { expectBalanceIsLedgerSum, ledgerOf } from "./support.js";

// The ledger's own rules, each call on its own: what an amount may be, the exact boundary of a
// charge, what a line records, and the 402 a refused charge gives.
let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const AT = new Date("2030-05-01T09:30:00.000Z");
const line = (accountId: string, extra: Partial<LedgerLine> = {}): LedgerLine => ({
  accountId,
  category: "operator_credit",
  description: "a test line",
  at: AT,
  ...extra,
});
const inTx = <T>(fn: (tx: Transaction) => Promise<T>) => service.core.db.transaction(fn);

describe("amounts", () => {
  it("refuses a negative, fractional or unsafe amount to credit or charge, writing nothing", async () => {
    const { accountId } = await createAccount(service.core, undefined, { creditMicros: 1_000 });
    for (const micros of [-1, 0.5, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(
        inTx((tx) => credit(tx, line(accountId), micros)),
        String(micros),
      ).rejects.toThrow(`credit of ${micros} micros`);
      await expect(
        inTx((tx) => tryCharge(tx, line(accountId), micros)),
        String(micros),
      ).rejects.toThrow(`charge of ${micros} micros`);
    }
    expect(await ledgerOf(service.core, accountId)).toHaveLength(1);
    expect(await inTx((tx) => balanceOf(tx, accountId))).toBe(1_000);
  });

  it("takes an amount of 0 (a free item still shows in the ledger)", async () => {
    const { accountId } = await createAccount(service.core, undefined, { creditMicros: 0 });
    expect(await inTx((tx) => tryCharge(tx, line(accountId, { description: "free" }), 0))).toMatchObject({ balanceMicros: 0 });
    expect(await inTx((tx) => credit(tx, line(accountId, { description: "nothing back" }), 0))).toMatchObject({ balanceMicros: 0 });
    expect((await ledgerOf(service.core, accountId)).map((row) => [row.amountMicros, row.description])).toEqual([
      [0, "free"],
      [0, "nothing back"],
    ]);
  });
});

describe("a charge", () => {
  it("takes exactly the whole balance, and refuses one micro-dollar more with nothing written", async () => {
    const { accountId } = await createAccount(service.core, undefined, { creditMicros: 5_000 });
    expect(await inTx((tx) => tryCharge(tx, line(accountId), 5_001))).toBeNull();
    expect(await ledgerOf(service.core, accountId)).toHaveLength(1);
    const taken = await inTx((tx) => tryCharge(tx, line(accountId), 5_000));
    expect(taken).toMatchObject({ balanceMicros: 0, transactionId: expect.stringMatching(/^txn_/) });
    await expectBalanceIsLedgerSum(service.core, accountId);
  });

  it("of an unknown account is refused (null), and crediting one throws", async () => {
    expect(await inTx((tx) => tryCharge(tx, line("acct_missing"), 1))).toBeNull();
    await expect(inTx((tx) => credit(tx, line("acct_missing"), 1))).rejects.toThrow("no account acct_missing");
    expect(await inTx((tx) => balanceOf(tx, "acct_missing"))).toBe(0);
  });

  it("that the balance cannot cover is a 402 saying what it costs and what there is", async () => {
    const { accountId } = await createAccount(service.core, undefined, { creditMicros: 50 });
    const refused = (await inTx((tx) => charge(tx, line(accountId), 100, "A test item")).catch((error: AppError) => error)) as AppError;
    expect(refused).toMatchObject({
      code: "insufficient_balance",
      status: 402,
      detail: "A test item costs 0.000100 USD but the balance is 0.000050 USD. Top up, then try again.",
    });
    expect(refused.extra).toEqual({ required: "0.000100", balance: "0.000050", currency: "USD" });
    const done = await inTx((tx) => charge(tx, line(accountId), 50, "A test item"));
    expect(done.balanceMicros).toBe(0);
  });
});

describe("a ledger line", () => {
  it("records every field it is given, the amount signed and the balance after it", async () => {
    const { accountId } = await createAccount(service.core, undefined, { creditMicros: 1_000 });
    const charged = await inTx((tx) =>
      tryCharge(
        tx,
        line(accountId, { category: "call", item: "call.outbound", callId: "call_x", numberId: "num_x", messageId: "msg_x", quantity: 3, description: "3 s" }),
        750,
      ),
    );
    const credited = await inTx((tx) => credit(tx, line(accountId, { description: "back" }), 250));
    const [, first, second] = await ledgerOf(service.core, accountId);
    expect(first).toMatchObject({
      transactionId: charged!.transactionId,
      accountId,
      amountMicros: -750,
      balanceAfterMicros: 250,
      category: "call",
      item: "call.outbound",
      callId: "call_x",
      numberId: "num_x",
      messageId: "msg_x",
      quantity: 3,
      description: "3 s",
      createdAt: AT,
    });
    expect(second).toMatchObject({
      transactionId: credited.transactionId,
      amountMicros: 250,
      balanceAfterMicros: 500,
      item: null,
      callId: null,
      numberId: null,
      messageId: null,
      quantity: 0,
      description: "back",
    });
  });
});
