import { and, asc, eq, inArray, ne, sql } from "drizzle-orm";
import { loadAgent } from "../agents/agents.js";
import type { Core } from "../context.js";
import type { Executor } from "../db/database.js";
import { events } from "../db/schema/events.js";
import type { WebhookRow } from "../db/schema/webhooks.js";
import { newId } from "../ids.js";
import { enqueueDelivery } from "../webhooks/deliveries.js";
import { EVENTS_CREATED_CHANNEL } from "./channels.js";
import { type EnvelopeFields, eventEnvelope } from "./envelope.js";
import { type DeliveryTarget, deliveryTarget, protocol2, type SessionMessage } from "./routing.js";
import type { EventEnvelope, EventType } from "./schemas.js";

export interface NewEvent {
  accountId: string;
  agentId: string;
  type: EventType;
  payload: Record<string, unknown>;
  /** Top-level fields beside `payload` (call.utterance's live-turn fields). */
  extras?: EnvelopeFields["extras"];
  /** How the event reads to a protocol-2 webhook, when it belongs to a call session. */
  sessionMessage?: (envelope: EventEnvelope, webhook: WebhookRow) => SessionMessage | Promise<SessionMessage>;
  /** The turn of a live-turn event: its webhook delivery retries fast, then gives the turn up. */
  liveTurnId?: string;
  /** Where it goes, when the caller has already looked (inside the same transaction). */
  target?: DeliveryTarget;
}

/**
 * Writes an event and routes it: to the agent's relay socket if one is open, else to its
 * webhook (a delivery job), else to the mailbox. Call it with the transaction of the change
 * that caused it, so the change, the event and its delivery job commit together or not at all.
 */
export async function recordEvent(core: Core, tx: Executor, event: NewEvent, now: Date = core.now()): Promise<EventEnvelope> {
  const envelope = eventEnvelope({
    eventId: newId("evt"),
    agentId: event.agentId,
    accountId: event.accountId,
    type: event.type,
    createdAt: now.toISOString(),
    payload: event.payload,
    extras: event.extras,
  });
  const target: DeliveryTarget = event.target ?? (await deliveryTarget(tx, event.agentId, now));
  await lockAgentEvents(tx, event.agentId);
  const [row] = await tx
    .insert(events)
    .values({
      eventId: envelope.event_id,
      accountId: event.accountId,
      agentId: event.agentId,
      eventType: event.type,
      envelope,
      route: target.route,
      createdAt: now,
    })
    .returning({ seq: events.seq });
  if (target.route === "webhook") {
    const typed = protocol2(target) && event.sessionMessage ? await event.sessionMessage(envelope, target.webhook) : null;
    await enqueueDelivery(core, tx, {
      accountId: event.accountId,
      agentId: event.agentId,
      webhookId: target.webhook.webhookId,
      eventSeq: row!.seq,
      messageId: envelope.event_id,
      messageType: typed?.type ?? event.type,
      body: typed?.body ?? envelope,
      liveTurnId: event.liveTurnId,
    });
  } else {
    // A webhook's event is neither the relay's nor the mailbox's until abandoned (which announces it then).
    await core.bus.publish(EVENTS_CREATED_CHANNEL, { agent_id: event.agentId, account_id: event.accountId }, { tx });
  }
  return envelope;
}

/**
 * The namespace of the per-agent advisory locks that order an agent's events (the first key of
 * the two-key lock; the second is a hash of the agent id). Any fixed number no other lock uses.
 */
export const AGENT_EVENTS_LOCK = 7_240_502;

/**
 * Holds the agent's event lock until the transaction ends, so the agent's events commit in the
 * order of their seq: with several processes writing, the relay (which hands events out by seq)
 * never sees a later one committed before an earlier one. agentline_open_turn
 * (core/db/functions/) takes the same lock, given this namespace. Raw SQL: the query builder has
 * no advisory locks.
 */
async function lockAgentEvents(tx: Executor, agentId: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(${AGENT_EVENTS_LOCK}, hashtext(${agentId}))`);
}

/** Which pending events a poll or a wait takes. */
export interface EventFilter {
  agentId?: string | undefined;
  /** Any of these types; all types when absent. */
  eventTypes?: readonly string[] | undefined;
  /** Only events about this call (`payload.call_id`). */
  callId?: string | undefined;
}

/** Pending events in the mailbox: everything not yet delivered that a webhook is not holding. */
function pendingFilter(accountId: string, filter: EventFilter) {
  return and(
    eq(events.accountId, accountId),
    eq(events.status, "pending"),
    ne(events.route, "webhook"),
    filter.agentId ? eq(events.agentId, filter.agentId) : undefined,
    filter.eventTypes ? inArray(events.eventType, [...filter.eventTypes]) : undefined,
    filter.callId ? sql`(${events.envelope} -> 'payload' ->> 'call_id') = ${filter.callId}` : undefined,
  );
}

/**
 * The mailbox poll: returns pending events, oldest first, and marks them delivered. Concurrent
 * polls never return the same event (rows are claimed with SKIP LOCKED).
 */
export async function pollEvents(core: Core, accountId: string, query: { agent_id?: string | undefined; event_type?: EventType | undefined; limit: number }) {
  if (query.agent_id) await loadAgent(core.db, accountId, query.agent_id);
  return claimEvents(core, accountId, { agentId: query.agent_id, eventTypes: query.event_type ? [query.event_type] : undefined }, query.limit);
}

/**
 * The most bytes of events (their envelopes as JSON) one page of the mailbox carries: a page
 * stops before the event that would pass it, and says has_more. Its first event is carried
 * whatever its size, so the mailbox never sticks.
 */
export const PAGE_MAX_BYTES = 1024 * 1024;

/** The size of an event's envelope as JSON, counted in the database: what a page is measured by. */
const envelopeBytes = sql<number>`octet_length(${events.envelope}::text)`.mapWith(Number);

/** The rows, from the first, that one page carries. */
function fitPage<T extends { bytes: number }>(rows: T[]): T[] {
  let total = 0;
  let count = 0;
  for (const row of rows) {
    total += row.bytes;
    if (count > 0 && total > PAGE_MAX_BYTES) break;
    count++;
  }
  return rows.slice(0, count);
}

/**
 * Takes up to limit pending events matching filter, oldest first, within PAGE_MAX_BYTES, marking
 * them delivered. Concurrent polls never return the same event (rows are claimed with SKIP
 * LOCKED), and an event is marked delivered only by the page that returns it.
 */
export async function claimEvents(core: Core, accountId: string, filter: EventFilter, limit: number) {
  const where = pendingFilter(accountId, filter);
  return core.db.transaction(async (tx) => {
    // The rows are locked as they are sized. A locked look-ahead row is skipped by concurrent
    // polls without being taken by this one, so only a page cut short by its byte budget leaves
    // any (until this commits): they are still pending, and has_more says so.
    const sized = await tx
      .select({ seq: events.seq, bytes: envelopeBytes })
      .from(events)
      .where(where)
      .orderBy(asc(events.seq))
      .limit(limit)
      .for("update", { skipLocked: true });
    const page = fitPage(sized).map((r) => r.seq);
    const taken =
      page.length === 0
        ? []
        : await tx
            .update(events)
            .set({ status: "delivered", deliveredVia: "mailbox", deliveredAt: core.now() })
            .where(inArray(events.seq, page))
            .returning({ seq: events.seq, envelope: events.envelope });
    taken.sort((a, b) => a.seq - b.seq);
    const [more] = await tx.select({ seq: events.seq }).from(events).where(where).limit(1);
    return { data: taken.map((r) => r.envelope as EventEnvelope), limit, has_more: more !== undefined };
  });
}

/** Pending events, oldest first, within PAGE_MAX_BYTES, left pending. */
export async function peekEvents(core: Core, accountId: string, query: { agent_id?: string | undefined; limit: number }) {
  if (query.agent_id) await loadAgent(core.db, accountId, query.agent_id);
  const where = pendingFilter(accountId, { agentId: query.agent_id });
  const sized = await core.db
    .select({ seq: events.seq, bytes: envelopeBytes })
    .from(events)
    .where(where)
    .orderBy(asc(events.seq))
    .limit(query.limit + 1);
  const page = fitPage(sized.slice(0, query.limit)).map((r) => r.seq);
  const rows =
    page.length === 0
      ? []
      : await core.db
          .select({ envelope: events.envelope })
          .from(events)
          .where(and(inArray(events.seq, page), where))
          .orderBy(asc(events.seq));
  return { data: rows.map((r) => r.envelope as EventEnvelope), limit: query.limit, has_more: sized.length > page.length };
}
