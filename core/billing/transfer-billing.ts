import { and, asc, eq, gt, lte } from "drizzle-orm";
import type { Core } from "../context.js";
import type { Executor } from "../db/database.js";
import { type CallStatus, calls } from "../db/schema/calls.js";
import { balanceOf, credit, insufficientBalance, type LedgerLine, tryCharge } from "./ledger.js";

type CallRow = typeof calls.$inferSelect;

/**
 * The bridged leg of a transferred call (docs/decisions/0083-transfer.md) is billed as an outbound
 * call: per second at the outbound rate, prepaid in blocks from the moment the person answers,
 * settled exactly when the call ends. It is billed beside the call's own talk time, in ledger rows
 * of item `call.transfer` on the same call.
 */
export function transferRate(core: Core): number {
  return core.config.rates.callPerSecond.outbound;
}

/** A transfer may start only if the balance covers the bridged leg's first minute (402 otherwise). */
export async function requireTransferMinute(tx: Executor, accountId: string, ratePerSecond: number): Promise<void> {
  const needed = ratePerSecond * 60;
  const balance = await balanceOf(tx, accountId);
  if (balance < needed) throw insufficientBalance("A transfer's first minute", needed, balance);
}

function legLine(call: CallRow, at: Date, quantity: number, description: string): LedgerLine {
  return { accountId: call.accountId, category: "call", item: "call.transfer", callId: call.callId, quantity, description, at };
}

/** Prepays the leg's next block from `from`; returns the seconds bought (0 when none is affordable). */
export async function prepayTransferBlock(core: Core, tx: Executor, call: CallRow, from: Date): Promise<number> {
  const rate = call.transferRateMicrosPerSecond;
  if (rate <= 0) return 0;
  const affordable = Math.floor((await balanceOf(tx, call.accountId)) / rate);
  const seconds = Math.min(core.config.callBillingBlockSeconds, affordable);
  if (seconds <= 0) return 0;
  const charged = await tryCharge(tx, legLine(call, core.now(), seconds, `${seconds} s of transferred (outbound) talk time, prepaid`), seconds * rate);
  if (!charged) return 0;
  await tx
    .update(calls)
    .set({ transferPaidUntil: new Date(from.getTime() + seconds * 1000), transferChargedMicros: call.transferChargedMicros + seconds * rate })
    .where(eq(calls.callId, call.callId));
  return seconds;
}

/** The person answered: the leg starts being paid (with nothing affordable, the meter ends the call). */
export async function startTransferBilling(core: Core, tx: Executor, call: CallRow): Promise<void> {
  if (call.transferRateMicrosPerSecond === 0) return;
  const bought = await prepayTransferBlock(core, tx, call, call.transferAnsweredAt!);
  if (bought === 0) await tx.update(calls).set({ transferPaidUntil: call.transferAnsweredAt }).where(eq(calls.callId, call.callId));
}

/**
 * At the end of the call, in the transaction that ends it: bills the bridged leg exactly (answer
 * of the person to the end, whole seconds), refunding unused prepaid seconds or charging the
 * missing ones while the balance lasts. A transfer still dialing when the call ends is a failed one.
 */
export async function settleTransferBilling(core: Core, tx: Executor, call: CallRow): Promise<CallRow> {
  if (call.transferStatus === "dialing") {
    const [row] = await tx.update(calls).set({ transferStatus: "failed" }).where(eq(calls.callId, call.callId)).returning();
    return row!;
  }
  if (!call.transferAnsweredAt || !call.endedAt || call.transferRateMicrosPerSecond === 0) return call;
  const rate = call.transferRateMicrosPerSecond;
  const leg = Math.max(0, Math.ceil((call.endedAt.getTime() - call.transferAnsweredAt.getTime()) / 1000));
  const paid = call.transferChargedMicros / rate;
  let billed = leg;
  if (leg < paid) {
    await credit(tx, legLine(call, core.now(), leg - paid, `${paid - leg} s of prepaid transferred talk time not used, refunded`), (paid - leg) * rate);
  } else if (leg > paid) {
    const more = Math.min(leg - paid, Math.floor((await balanceOf(tx, call.accountId)) / rate));
    if (more > 0) await tryCharge(tx, legLine(call, core.now(), more, `${more} s of transferred (outbound) talk time`), more * rate);
    billed = paid + more;
  }
  const [row] = await tx
    .update(calls)
    .set({ transferChargedMicros: billed * rate, chargedMicros: call.chargedMicros + billed * rate })
    .where(eq(calls.callId, call.callId))
    .returning();
  return row!;
}

const LOOKAHEAD_MS = 5_000;

function legDueBefore(dueBy: Date) {
  return and(
    eq(calls.status, "in-progress" satisfies CallStatus),
    eq(calls.transferStatus, "bridged"),
    lte(calls.transferPaidUntil, dueBy),
    gt(calls.transferRateMicrosPerSecond, 0),
  );
}

/**
 * The bridged legs' meter, as meterCalls is the calls': buys the next block of legs about to run
 * out, and returns the calls whose leg could not pay, to be ended when its paid time ran out.
 */
export async function meterTransfers(core: Core): Promise<Array<{ callId: string; endAt: Date }>> {
  const now = core.now();
  const dueBy = new Date(now.getTime() + LOOKAHEAD_MS);
  const due = await core.db.select({ callId: calls.callId }).from(calls).where(legDueBefore(dueBy)).orderBy(asc(calls.transferPaidUntil)).limit(200);
  const exhausted: Array<{ callId: string; endAt: Date }> = [];
  for (const { callId } of due) {
    const unpaid = await core.db.transaction(async (tx) => {
      const [call] = await tx
        .select()
        .from(calls)
        .where(and(eq(calls.callId, callId), legDueBefore(dueBy)))
        .for("update", { skipLocked: true });
      if (!call) return undefined;
      const bought = await prepayTransferBlock(core, tx, call, call.transferPaidUntil!);
      return bought === 0 && call.transferPaidUntil! <= now ? { callId, endAt: call.transferPaidUntil! } : undefined;
    });
    if (unpaid) exhausted.push(unpaid);
  }
  return exhausted;
}
