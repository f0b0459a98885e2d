import { and, eq, isNull } from "drizzle-orm";
import { credit } from "../core/billing/ledger.js";
import type { Core } from "../core/context.js";
import type { Transaction } from "../core/db/database.js";
import { paymentSettlements } from "../core/db/schema/payment-settlements.js";
import { newId } from "../core/ids.js";

/** The request a payment is paying for: the route it was bound to and the request's fingerprint. */
export interface PaidRequest {
  scope: string;
  requestHash: string;
}

export interface Signature {
  network: string;
  asset: string;
  payer: string;
  nonce: string;
  payee: string;
  amountMicros: number;
}

export type Settlement = typeof paymentSettlements.$inferSelect;

export type Claim = { kind: "claimed"; settlementId: string } | { kind: "replay"; settlement: Settlement } | { kind: "used" };

/**
 * Claims a signature before it is settled. The unique index makes it good once across every
 * process. A signature already used for this very request (same route, same request) whose
 * answer is stored is a retry: it gets that answer. Anything else is a used payment.
 */
export async function claimSignature(core: Core, signature: Signature, request: PaidRequest): Promise<Claim> {
  const now = core.now();
  const [claimed] = await core.db
    .insert(paymentSettlements)
    .values({
      settlementId: newId("pay"),
      ...signature,
      mode: core.config.paymentsMode,
      status: "settling",
      scope: request.scope,
      requestHash: request.requestHash,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoNothing()
    .returning({ settlementId: paymentSettlements.settlementId });
  if (claimed) return { kind: "claimed", settlementId: claimed.settlementId };
  const [existing] = await core.db
    .select()
    .from(paymentSettlements)
    .where(
      and(
        eq(paymentSettlements.network, signature.network),
        eq(paymentSettlements.asset, signature.asset),
        eq(paymentSettlements.payer, signature.payer),
        eq(paymentSettlements.nonce, signature.nonce),
      ),
    );
  const sameRequest = existing && existing.scope === request.scope && existing.requestHash === request.requestHash;
  return sameRequest && existing.responseStatus !== null ? { kind: "replay", settlement: existing } : { kind: "used" };
}

export async function markSettled(core: Core, settlementId: string, reference: string): Promise<void> {
  await core.db
    .update(paymentSettlements)
    .set({ status: "settled", reference, updatedAt: core.now() })
    .where(eq(paymentSettlements.settlementId, settlementId));
}

/** Settlement failed: the signature was not spent, so it may be presented again. */
export async function releaseClaim(core: Core, settlementId: string): Promise<void> {
  await core.db.delete(paymentSettlements).where(and(eq(paymentSettlements.settlementId, settlementId), eq(paymentSettlements.status, "settling")));
}

/**
 * Credits a settled payment to an account, once: the settlement row records the account and the
 * ledger row, and a second credit of the same settlement changes nothing. Returns the balance.
 */
export async function creditSettlement(tx: Transaction, settlementId: string, accountId: string, at: Date): Promise<void> {
  const [settlement] = await tx
    .select()
    .from(paymentSettlements)
    .where(and(eq(paymentSettlements.settlementId, settlementId), isNull(paymentSettlements.transactionId)))
    .for("update");
  if (!settlement) return;
  const { transactionId } = await credit(
    tx,
    { accountId, category: "topup", description: `Payment from ${settlement.payer} (${settlement.reference ?? settlement.settlementId})`, at },
    settlement.amountMicros,
  );
  await tx.update(paymentSettlements).set({ accountId, transactionId, updatedAt: at }).where(eq(paymentSettlements.settlementId, settlementId));
}

/** Remembers the answer a paid request got, for retries with the same payment. */
export async function storeAnswer(core: Core, settlementId: string, status: number, body: unknown): Promise<void> {
  await core.db
    .update(paymentSettlements)
    .set({ responseStatus: status, responseBody: body ?? null, updatedAt: core.now() })
    .where(eq(paymentSettlements.settlementId, settlementId));
}
