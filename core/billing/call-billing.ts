import { and, asc, eq, gt, lte } from "drizzle-orm";
import type { Core } from "../context.js";
import type { Executor } from "../db/database.js";
import { type CallStatus, calls } from "../db/schema/calls.js";
import { balanceOf, credit, insufficientBalance, type LedgerLine, tryCharge } from "./ledger.js";

type CallRow = typeof calls.$inferSelect;

/** The rate of a call, micro-USD per second, from the rate card. */
export function callRate(core: Core, direction: "inbound" | "outbound"): number {
  return core.config.rates.callPerSecond[direction];
}

/** A call may start only if the balance covers its first minute (402 otherwise). */
export async function requireFirstMinute(tx: Executor, accountId: string, ratePerSecond: number): Promise<void> {
  const needed = ratePerSecond * 60;
  const balance = await balanceOf(tx, accountId);
  if (balance < needed) throw insufficientBalance("A call's first minute", needed, balance);
}

function callLine(call: CallRow, at: Date, quantity: number, description: string): LedgerLine {
  return { accountId: call.accountId, category: "call", item: `call.${call.direction}`, callId: call.callId, quantity, description, at };
}

/**
 * Prepays the next block of talk time from `from`: a whole block if the balance allows, else as
 * many whole seconds as it covers. Returns the seconds bought (0 when not even one is affordable).
 */
export async function prepayBlock(core: Core, tx: Executor, call: CallRow, from: Date): Promise<number> {
  const rate = call.rateMicrosPerSecond;
  const affordable = Math.floor((await balanceOf(tx, call.accountId)) / rate);
  const seconds = Math.min(core.config.callBillingBlockSeconds, affordable);
  if (seconds <= 0) return 0;
  const charged = await tryCharge(tx, callLine(call, core.now(), seconds, `${seconds} s of ${call.direction} talk time, prepaid`), seconds * rate);
  if (!charged) return 0;
  await tx
    .update(calls)
    .set({ paidUntil: new Date(from.getTime() + seconds * 1000), chargedMicros: call.chargedMicros + seconds * rate })
    .where(eq(calls.callId, call.callId));
  return seconds;
}

/**
 * At answer: talk time starts being paid (if nothing can be paid, the meter ends the call). A
 * free call (a rate of 0, where the rate card makes it so) has no paid time to run out: it is
 * never metered, and its talk is billed at 0 when it ends.
 */
export async function startCallBilling(core: Core, tx: Executor, call: CallRow): Promise<void> {
  if (call.rateMicrosPerSecond === 0) return;
  const bought = await prepayBlock(core, tx, call, call.answeredAt!);
  // A block bought set paidUntil past the answer; with none, paid time ends at the answer.
  if (bought === 0) await tx.update(calls).set({ paidUntil: call.answeredAt }).where(eq(calls.callId, call.callId));
}

/**
 * At the end of a call, in the transaction that ends it: bills exactly the talk time, in whole
 * seconds. Prepaid seconds not used are refunded; seconds beyond what was prepaid (the meter was
 * late) are charged while the balance lasts. Records the seconds billed; returns the updated row.
 */
export async function settleCallBilling(core: Core, tx: Executor, call: CallRow): Promise<CallRow> {
  const rate = call.rateMicrosPerSecond;
  const talk = call.durationSeconds ?? 0;
  const paid = rate > 0 ? call.chargedMicros / rate : 0;
  let billed = talk;
  if (talk < paid) {
    await credit(tx, callLine(call, core.now(), talk - paid, `${paid - talk} s of prepaid talk time not used, refunded`), (paid - talk) * rate);
  } else if (talk > paid && rate > 0) {
    const more = Math.min(talk - paid, Math.floor((await balanceOf(tx, call.accountId)) / rate));
    if (more > 0) await tryCharge(tx, callLine(call, core.now(), more, `${more} s of ${call.direction} talk time`), more * rate);
    billed = paid + more;
  }
  const [row] = await tx
    .update(calls)
    .set({ billedSeconds: billed, chargedMicros: billed * rate })
    .where(eq(calls.callId, call.callId))
    .returning();
  return row!;
}

// Extend a call's paid time this long before it runs out, so a paying call never lapses.
const LOOKAHEAD_MS = 5_000;

/** A call whose paid time runs out before `dueBy` and that is still talking. */
function dueBefore(dueBy: Date) {
  // A free call has no paid time (paid_until stays null), so it is never due; the rate is
  // checked too for one answered before free calls were left unmetered.
  return and(eq(calls.status, "in-progress" satisfies CallStatus), lte(calls.paidUntil, dueBy), gt(calls.rateMicrosPerSecond, 0));
}

/**
 * The meter: buys the next block for calls whose paid time is about to run out, and returns the
 * calls that could not pay and whose paid time is over, to be ended at the moment it ran out.
 * Each call is prepaid in a transaction of its own, its row claimed with SKIP LOCKED (so any
 * number of processes may run it): a live turn, which locks its call's row, waits at most for
 * that one call's prepayment, where one transaction over every due call had held them all
 * until the last was paid.
 */
export async function meterCalls(core: Core): Promise<Array<{ callId: string; endAt: Date }>> {
  const now = core.now();
  const dueBy = new Date(now.getTime() + LOOKAHEAD_MS);
  const due = await core.db.select({ callId: calls.callId }).from(calls).where(dueBefore(dueBy)).orderBy(asc(calls.paidUntil)).limit(200);
  const exhausted: Array<{ callId: string; endAt: Date }> = [];
  for (const { callId } of due) {
    const unpaid = await core.db.transaction(async (tx) => {
      // Still due, and not being prepaid by another process (or locked by a turn: next pass).
      const [call] = await tx
        .select()
        .from(calls)
        .where(and(eq(calls.callId, callId), dueBefore(dueBy)))
        .for("update", { skipLocked: true });
      if (!call) return undefined;
      const bought = await prepayBlock(core, tx, call, call.paidUntil!);
      return bought === 0 && call.paidUntil! <= now ? { callId, endAt: call.paidUntil! } : undefined;
    });
    if (unpaid) exhausted.push(unpaid);
  }
  return exhausted;
}
