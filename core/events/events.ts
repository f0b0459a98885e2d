import { and, asc, eq, inArray } from "drizzle-orm";
import { loadAgent } from "../agents/agents.js";
import type { Core } from "../core.js";
import type { Executor } from "../db/database.js";
import { events } from "../db/schema/events.js";
import { newId } from "../ids.js";
import type { EventEnvelope, EventType } from "./schemas.js";

export interface NewEvent {
  accountId: string;
  agentId: string;
  type: EventType;
  payload: Record<string, unknown>;
  /** Top-level fields beside `payload` (call.utterance's live-turn fields). */
  extras?: Partial<Omit<EventEnvelope, "event_id" | "agent_id" | "account_id" | "event_type" | "created_at" | "payload">>;
}

/**
 * Writes an event. Call it with the transaction of the change that caused it, so that the
 * change and its event commit together or not at all.
 */
export async function recordEvent(tx: Executor, event: NewEvent, now: Date): Promise<EventEnvelope> {
  const envelope: EventEnvelope = {
    event_id: newId("evt"),
    agent_id: event.agentId,
    account_id: event.accountId,
    event_type: event.type,
    created_at: now.toISOString(),
    payload: event.payload,
    ...event.extras,
  };
  await tx.insert(events).values({
    eventId: envelope.event_id,
    accountId: event.accountId,
    agentId: event.agentId,
    eventType: event.type,
    envelope,
    createdAt: now,
  });
  return envelope;
}

function pendingFilter(accountId: string, agentId?: string, eventType?: string) {
  return and(
    eq(events.accountId, accountId),
    eq(events.status, "pending"),
    agentId ? eq(events.agentId, agentId) : undefined,
    eventType ? eq(events.eventType, eventType) : undefined,
  );
}

/**
 * The mailbox poll: returns pending events, oldest first, and marks them delivered. Concurrent
 * polls never return the same event (rows are claimed with SKIP LOCKED).
 */
export async function pollEvents(core: Core, accountId: string, query: { agent_id?: string | undefined; event_type?: EventType | undefined; limit: number }) {
  if (query.agent_id) await loadAgent(core.db, accountId, query.agent_id);
  return core.db.transaction(async (tx) => {
    const rows = await tx
      .select({ seq: events.seq, envelope: events.envelope })
      .from(events)
      .where(pendingFilter(accountId, query.agent_id, query.event_type))
      .orderBy(asc(events.seq))
      .limit(query.limit + 1)
      .for("update", { skipLocked: true });
    const taken = rows.slice(0, query.limit);
    if (taken.length > 0) {
      await tx
        .update(events)
        .set({ status: "delivered", deliveredVia: "mailbox", deliveredAt: core.now() })
        .where(inArray(events.seq, taken.map((r) => r.seq)));
    }
    return { data: taken.map((r) => r.envelope as EventEnvelope), limit: query.limit, has_more: rows.length > query.limit };
  });
}

/** Pending events, oldest first, left pending. */
export async function peekEvents(core: Core, accountId: string, query: { agent_id?: string | undefined; limit: number }) {
  if (query.agent_id) await loadAgent(core.db, accountId, query.agent_id);
  const rows = await core.db
    .select({ envelope: events.envelope })
    .from(events)
    .where(pendingFilter(accountId, query.agent_id))
    .orderBy(asc(events.seq))
    .limit(query.limit + 1);
  return { data: rows.slice(0, query.limit).map((r) => r.envelope as EventEnvelope), limit: query.limit, has_more: rows.length > query.limit };
}
