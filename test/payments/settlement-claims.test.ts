import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accounts } from "../../core/db/schema/accounts.js";
import { ledgerEntries } from "../../core/db/schema/ledger-entries.js";
import { paymentSettlements } from "../../core/db/schema/payment-settlements.js";
import { createAccount } from "../../harness/accounts.js";
import { claimSignature, creditSettlement, markSettled, type PaidRequest, type Signature, storeAnswer } from "../../payments/settlements.js";
import { startTestService, type TestService } from "../support/service.js";
import { BASE_SEPOLIA_USDC, newWallet, randomNonce } from "../support/wallet.js";

// The single-use claim on a signature and the credit of a settled payment, called directly on a
// real database.
let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const PAYEE = "0x1111111111111111111111111111111111111111";
const aSignature = (amountMicros = 1_250_000): Signature => ({
  network: BASE_SEPOLIA_USDC.network,
  asset: BASE_SEPOLIA_USDC.asset,
  payer: newWallet().address,
  nonce: randomNonce(),
  payee: PAYEE,
  amountMicros,
});
const TOPUP: PaidRequest = { scope: "POST /v1/billing/topup/x402/pay", requestHash: "hash-of-the-first-request" };

/** A new signature claimed for `request` and settled, with its answer stored unless told otherwise. */
async function usedFor(request: PaidRequest, options: { answered?: boolean } = {}) {
  const signature = aSignature();
  const claim = await claimSignature(service.core, signature, request);
  if (claim.kind !== "claimed") throw new Error(`expected a claim, got ${claim.kind}`);
  await markSettled(service.core, claim.settlementId, "test-money:0001");
  if (options.answered !== false) await storeAnswer(service.core, claim.settlementId, 200, { credited: "1.250000" });
  return { signature, settlementId: claim.settlementId };
}

describe("claiming a signature", () => {
  it("claims a new signature under a fresh pay_ id, recording what it pays for", async () => {
    const signature = aSignature();
    const claim = await claimSignature(service.core, signature, TOPUP);
    expect(claim).toEqual({ kind: "claimed", settlementId: expect.stringMatching(/^pay_/) });
    const [row] = await service.core.db.select().from(paymentSettlements).where(eq(paymentSettlements.payer, signature.payer));
    expect(row).toMatchObject({ ...signature, mode: "local", status: "settling", scope: TOPUP.scope, requestHash: TOPUP.requestHash, responseStatus: null });
  });

  it("gives the stored answer to the same signature on the same request (same route, same request)", async () => {
    const { signature, settlementId } = await usedFor(TOPUP);
    const again = await claimSignature(service.core, signature, { ...TOPUP });
    expect(again).toMatchObject({ kind: "replay", settlement: { settlementId, responseStatus: 200, responseBody: { credited: "1.250000" } } });
  });

  it("refuses the same signature on the same route for another request as used", async () => {
    const { signature } = await usedFor(TOPUP);
    expect(await claimSignature(service.core, signature, { scope: TOPUP.scope, requestHash: "hash-of-another-request" })).toEqual({ kind: "used" });
  });

  it("refuses the same signature on another route, even with the same request fingerprint, as used", async () => {
    const { signature } = await usedFor(TOPUP);
    expect(await claimSignature(service.core, signature, { scope: "POST /v1/x402/numbers/buy", requestHash: TOPUP.requestHash })).toEqual({ kind: "used" });
  });

  it("refuses the same signature on the same request as used while no answer is stored (it is still being served)", async () => {
    const { signature } = await usedFor(TOPUP, { answered: false });
    expect(await claimSignature(service.core, signature, TOPUP)).toEqual({ kind: "used" });
  });
});

describe("crediting a settled payment", () => {
  const ledgerOf = (accountId: string) => service.core.db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, accountId));

  it("credits the amount once, however often it is asked, with a line naming the payer and the settlement's reference", async () => {
    const { signature, settlementId } = await usedFor(TOPUP);
    const owner = await createAccount(service.core, undefined, { creditMicros: 0 });
    const at = new Date("2030-01-02T03:04:05.000Z");
    for (let i = 0; i < 2; i++) await service.core.db.transaction((tx) => creditSettlement(tx, settlementId, owner.accountId, at));
    const lines = await ledgerOf(owner.accountId);
    expect(lines.map((l) => [l.category, l.amountMicros, l.description])).toEqual([["topup", 1_250_000, `Payment from ${signature.payer} (test-money:0001)`]]);
    const [account] = await service.core.db.select().from(accounts).where(eq(accounts.accountId, owner.accountId));
    expect(account!.balanceMicros).toBe(1_250_000);
    const [row] = await service.core.db.select().from(paymentSettlements).where(eq(paymentSettlements.settlementId, settlementId));
    expect(row).toMatchObject({ accountId: owner.accountId, transactionId: lines[0]!.transactionId, updatedAt: at });
  });

  it("names the settlement itself when the payment has no reference yet", async () => {
    const signature = aSignature(40_000);
    const claim = await claimSignature(service.core, signature, TOPUP);
    if (claim.kind !== "claimed") throw new Error(claim.kind);
    const owner = await createAccount(service.core, undefined, { creditMicros: 0 });
    await service.core.db.transaction((tx) => creditSettlement(tx, claim.settlementId, owner.accountId, new Date()));
    expect((await ledgerOf(owner.accountId)).map((l) => [l.amountMicros, l.description])).toEqual([
      [40_000, `Payment from ${signature.payer} (${claim.settlementId})`],
    ]);
  });

  it("does nothing for a settlement that does not exist", async () => {
    const owner = await createAccount(service.core, undefined, { creditMicros: 0 });
    await service.core.db.transaction((tx) => creditSettlement(tx, "pay_missing", owner.accountId, new Date()));
    expect(await ledgerOf(owner.accountId)).toEqual([]);
  });
});
