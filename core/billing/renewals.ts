import { and, eq, lte } from "drizzle-orm";
import type { Core } from "../context.js";
import type { Transaction } from "../db/database.js";
import { numbers } from "../db/schema/numbers.js";
import { recordEvent } from "../events/events.js";
import { tryCharge } from "./ledger.js";
import { formatMicros } from "./money.js";
import { addMonths } from "./months.js";

type NumberRow = typeof numbers.$inferSelect;

async function tell(core: Core, tx: Transaction, number: NumberRow, type: "number.renewal_failed" | "number.released", payload: Record<string, unknown>) {
  // Events belong to an agent; an unassigned number has no one to tell.
  if (!number.agentId) return;
  await recordEvent(core, tx, {
    accountId: number.accountId,
    agentId: number.agentId,
    type,
    payload: { number_id: number.numberId, phone_number: number.phoneNumber, ...payload },
  });
}

/**
 * The lease job: numbers whose paid time is over are renewed for a month (auto-renewing ones) if
 * the balance allows. One that cannot be paid is kept for NUMBER_GRACE_DAYS (`number.renewal_failed`),
 * retried meanwhile, then released (`number.released`). A lease that does not renew itself (the
 * no-signup route) is released when it ends. Claimed with SKIP LOCKED: any process may run it.
 * Returns the numbers released, for the carrier.
 */
export async function renewLeases(core: Core): Promise<NumberRow[]> {
  const now = core.now();
  const released = await core.db.transaction(async (tx) => {
    const due = await tx
      .select()
      .from(numbers)
      .where(and(eq(numbers.status, "active"), lte(numbers.paidThrough, now)))
      .limit(200)
      .for("update", { skipLocked: true });
    const gone: NumberRow[] = [];
    for (const number of due) {
      const release = async (reason: string) => {
        await tx.update(numbers).set({ status: "released", releasedAt: now, updatedAt: now }).where(eq(numbers.numberId, number.numberId));
        await tell(core, tx, number, "number.released", { reason, released_at: now.toISOString() });
        gone.push(number);
      };
      if (!number.autoRenew) {
        await release("lease_expired");
        continue;
      }
      const paid = await tryCharge(
        tx,
        {
          accountId: number.accountId,
          category: "number",
          item: "number.renewal",
          numberId: number.numberId,
          quantity: 1,
          description: `${number.phoneNumber}: one more month`,
          at: now,
        },
        number.monthlyFeeMicros,
      );
      if (paid) {
        await tx
          .update(numbers)
          .set({ paidThrough: addMonths(number.paidThrough!, 1), renewalFailedAt: null, updatedAt: now })
          .where(eq(numbers.numberId, number.numberId));
      } else if (!number.renewalFailedAt) {
        await tx.update(numbers).set({ renewalFailedAt: now, updatedAt: now }).where(eq(numbers.numberId, number.numberId));
        const releaseAt = new Date(now.getTime() + core.config.numberGraceDays * 86_400_000);
        await tell(core, tx, number, "number.renewal_failed", {
          amount: formatMicros(number.monthlyFeeMicros),
          currency: "USD",
          release_at: releaseAt.toISOString(),
        });
      } else if (now.getTime() >= number.renewalFailedAt.getTime() + core.config.numberGraceDays * 86_400_000) {
        await release("unpaid");
      }
    }
    return gone;
  });
  for (const number of released) {
    await core.carrier
      .releaseNumber({ phoneNumber: number.phoneNumber, carrierRef: number.carrierRef })
      .catch((error: unknown) =>
        core.logger.error(
          { err: error, number_id: number.numberId, phone_number: number.phoneNumber },
          "a released number could not be handed back to the carrier; release it there by hand",
        ),
      );
  }
  return released;
}
