import { and, asc, eq, ne, notInArray } from "drizzle-orm";
import { loadAgent } from "../agents/agents.js";
import type { Core } from "../context.js";
import { events } from "../db/schema/events.js";
import { relaySessions } from "../db/schema/relay-sessions.js";
import { RELAY_SESSION_CHANNEL } from "../events/channels.js";
import type { EventEnvelope } from "../events/schemas.js";
import { newId } from "../ids.js";
import { inAccountScope } from "../request-scope.js";

/** `runtime` is a free label kept for diagnostics. */
export const RUNTIME_PATTERN = /^[a-z0-9_-]{1,32}$/;

/**
 * Items added in the same tick, from anywhere in the process, handed to one call of write; every
 * adder gets that call's promise.
 */
function sameTickBatches<T>(write: (core: Core, items: T[]) => Promise<void>): (core: Core, items: T[]) => Promise<void> {
  const pending = new WeakMap<Core, { items: T[]; done: Promise<void> }>();
  return (core, items) => {
    let batch = pending.get(core);
    if (!batch) {
      const fresh = { items: [] as T[], done: undefined as unknown as Promise<void> };
      fresh.done = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        pending.delete(core);
        return write(core, fresh.items);
      });
      pending.set(core, (batch = fresh));
    }
    batch.items.push(...items);
    return batch.done;
  };
}

/**
 * Registers an agent's relay socket as the one its events go to. A newer socket replaces an
 * older one in any process: the row is overwritten and the holder of the old one is told. Its
 * database work takes the account's turn: a socket is opened outside any request.
 */
export function openRelaySession(core: Core, accountId: string, agentId: string, runtime: string): Promise<string> {
  return inAccountScope(accountId, () => registerRelaySession(core, accountId, agentId, runtime));
}

async function registerRelaySession(core: Core, accountId: string, agentId: string, runtime: string): Promise<string> {
  await loadAgent(core.db, accountId, agentId);
  const sessionId = newId("sess");
  const now = core.now();
  const row = { agentId, sessionId, processId: core.processId, runtime, connectedAt: now, lastSeenAt: now };
  await core.db.transaction(async (tx) => {
    await tx.insert(relaySessions).values(row).onConflictDoUpdate({ target: relaySessions.agentId, set: row });
    await core.bus.publish(RELAY_SESSION_CHANNEL, { agent_id: agentId, session_id: sessionId }, { tx });
  });
  return sessionId;
}

/**
 * Keeps the session counted as live (the holder calls it with every ping). The touches of every
 * socket of the process that fall in one tick are one statement: sockets opened together ping
 * together (after a restart, every one of them), and a hundred separate commits at once held up
 * the live turns beside them by tens of milliseconds.
 */
export function touchRelaySession(core: Core, agentId: string, sessionId: string): Promise<void> {
  return touchBatches(core, [[agentId, sessionId]]);
}

// Fixed texts with arrays, prepared once; the pairs are matched as rows.
const WRITE_TOUCHES = `update relay_sessions set last_seen_at = $1::timestamptz
  where (agent_id, session_id) in (select * from unnest($2::text[], $3::text[]))`;

const touchBatches = sameTickBatches<[agentId: string, sessionId: string]>((core, pairs) =>
  core.dbHandle.rows(WRITE_TOUCHES, [core.now().toISOString(), pairs.map(([agentId]) => agentId), pairs.map(([, sessionId]) => sessionId)]).then(() => {}),
);

/** Forgets a closed socket, unless a newer one has already taken its place. */
export async function closeRelaySession(core: Core, agentId: string, sessionId: string): Promise<void> {
  await core.db.delete(relaySessions).where(and(eq(relaySessions.agentId, agentId), eq(relaySessions.sessionId, sessionId)));
}

/**
 * The agent's pending events a relay socket should have, oldest first, leaving out those it
 * already has in flight. Events a webhook is holding are the webhook's.
 */
export async function relayBacklog(core: Core, agentId: string, inFlight: string[], limit: number): Promise<EventEnvelope[]> {
  const rows = await core.db
    .select({ envelope: events.envelope })
    .from(events)
    .where(
      and(
        eq(events.agentId, agentId),
        eq(events.status, "pending"),
        ne(events.route, "webhook"),
        inFlight.length > 0 ? notInArray(events.eventId, inFlight) : undefined,
      ),
    )
    .orderBy(asc(events.seq))
    .limit(limit);
  return rows.map((r) => r.envelope as EventEnvelope);
}

/**
 * Acknowledged events are delivered; acks for unknown or already-delivered ids change nothing.
 * Acks arriving in the same tick, from every relay socket of the process, are written in one
 * statement (one commit instead of one per ack: under load, most of a turn's database cost).
 */
export function ackRelayEvents(core: Core, agentId: string, eventIds: string[]): Promise<void> {
  if (eventIds.length === 0) return Promise.resolve();
  return ackBatches(
    core,
    eventIds.map((id) => [agentId, id]),
  );
}

// An id counts only for the agent whose socket acknowledged it: the pairs are matched as rows.
// The unique index on event_id finds the rows; the pairs then check each one's agent. An ack
// commits without waiting for the disk (synchronous_commit off, for this transaction only): a
// crash may forget it, and the event is then simply sent again (at least once, deduplicated by
// event_id). The events themselves stay durable. So acks never queue their flush beside a live
// turn's. A fixed text with arrays, prepared once: a statement built for each batch's length
// (a list of row values) cost a twentieth of a turn's CPU to build under load.
const WRITE_ACKS = `update events set status = 'delivered', delivered_via = 'relay', delivered_at = $1::timestamptz
  where event_id = any($3::text[]) and status = 'pending'
    and (agent_id, event_id) in (select * from unnest($2::text[], $3::text[]))
    and set_config('synchronous_commit', 'off', true) = 'off'`;

const ackBatches = sameTickBatches<[agentId: string, eventId: string]>((core, pairs) =>
  core.dbHandle.rows(WRITE_ACKS, [core.now().toISOString(), pairs.map(([agentId]) => agentId), pairs.map(([, eventId]) => eventId)]).then(() => {}),
);
