import { and, eq, notInArray } from "drizzle-orm";
import { hangupCall } from "../calls/hangup-call.js";
import { TERMINAL_STATUSES } from "../calls/schemas.js";
import type { Core } from "../context.js";
import { agents } from "../db/schema/agents.js";
import { calls } from "../db/schema/calls.js";
import { notFound } from "../errors.js";
import { loadAgent } from "./agents.js";

/**
 * Deletes an agent with its calls, turns, transcripts, messages and events (foreign-key
 * cascades). Its live calls are hung up first, so no caller is left talking to nobody. Its
 * numbers stay on the account, unassigned.
 */
export async function deleteAgent(core: Core, accountId: string, agentId: string) {
  await loadAgent(core.db, accountId, agentId);
  const live = await core.db
    .select()
    .from(calls)
    .where(and(eq(calls.agentId, agentId), notInArray(calls.status, [...TERMINAL_STATUSES] as (typeof calls.$inferSelect.status)[])));
  for (const call of live) await hangupCall(core, call, "service");
  const [row] = await core.db
    .delete(agents)
    .where(and(eq(agents.agentId, agentId), eq(agents.accountId, accountId)))
    .returning({ agentId: agents.agentId });
  if (!row) throw notFound("agent", agentId);
  return { agent_id: row.agentId, deleted: true as const };
}
