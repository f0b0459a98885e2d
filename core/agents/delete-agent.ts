import { and, eq, notInArray } from "drizzle-orm";
import { endCall } from "../calls/end-call.js";
import { TERMINAL_STATUSES } from "../calls/schemas.js";
import type { Core } from "../context.js";
import { agents } from "../db/schema/agents.js";
import { calls } from "../db/schema/calls.js";
import { numbers } from "../db/schema/numbers.js";
import { notFound } from "../errors.js";
import { loadAgent } from "./agents.js";

/**
 * Deletes an agent with its calls, turns, transcripts, messages and events (foreign-key
 * cascades). Its live calls are hung up first, so no caller is left talking to nobody. Its
 * purchased numbers are released with it, in the same transaction, so nothing goes on being
 * billed for an agent the user believes is gone; its attached numbers (bought elsewhere, no fee)
 * stay on the account, unassigned. The answer names both.
 */
export async function deleteAgent(core: Core, accountId: string, agentId: string) {
  await loadAgent(core.db, accountId, agentId);
  const live = await core.db
    .select()
    .from(calls)
    .where(and(eq(calls.agentId, agentId), notInArray(calls.status, [...TERMINAL_STATUSES] as (typeof calls.$inferSelect.status)[])));
  for (const call of live) await endCall(core, call, "service");
  const now = core.now();
  const outcome = await core.db.transaction(async (tx) => {
    const held = and(eq(numbers.agentId, agentId), eq(numbers.accountId, accountId), eq(numbers.status, "active"));
    const released = await tx
      .update(numbers)
      .set({ status: "released", releasedAt: now, updatedAt: now })
      .where(and(held, eq(numbers.source, "purchased")))
      .returning();
    const unassigned = await tx.select().from(numbers).where(held);
    const [row] = await tx
      .delete(agents)
      .where(and(eq(agents.agentId, agentId), eq(agents.accountId, accountId)))
      .returning({ agentId: agents.agentId });
    if (!row) throw notFound("agent", agentId);
    return { released, unassigned };
  });
  // As releaseNumber does: the carrier hears of it once the release is committed.
  for (const number of outcome.released) {
    await core.carrier.releaseNumber({ phoneNumber: number.phoneNumber, carrierRef: number.carrierRef }).catch((err: unknown) => {
      core.logger.error({ err, number_id: number.numberId }, "carrier release failed after the agent was deleted");
    });
  }
  const ref = (n: typeof numbers.$inferSelect) => ({ number_id: n.numberId, phone_number: n.phoneNumber });
  return { agent_id: agentId, deleted: true as const, released_numbers: outcome.released.map(ref), unassigned_numbers: outcome.unassigned.map(ref) };
}
