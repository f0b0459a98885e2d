import { eq, lt, sql } from "drizzle-orm";
import type postgres from "postgres";
import { type Bus, createSubscribers } from "./bus.js";
import type { Database } from "./db/database.js";
import { busMessages } from "./db/schema/bus-messages.js";
import type { Logger } from "./logger.js";

/**
 * The one LISTEN channel of the whole bus: bus channels travel inside the payload, so a process
 * needs a single listening connection however many channels it subscribes to. The live turn's
 * database function notifies on it too (core/db/functions/agentline_open_turn.sql), given this.
 */
export const NOTIFY_CHANNEL = "agentline";
/**
 * The most bytes of a NOTIFY payload sent as it is; a larger message goes by a row (or, from the
 * live turn's function, as ids only). PostgreSQL refuses 8000 bytes or more; this leaves room.
 */
export const NOTIFY_MAX_BYTES = 7000;
// An overflow row is read within milliseconds of its NOTIFY; a minute is a generous margin.
const SWEEP_EVERY_MS = 30_000;

/** What createPostgresBus needs: the process's own PostgreSQL client and drizzle handle on it. */
export interface PostgresBusOptions {
  client: postgres.Sql;
  db: Database;
  logger: Logger;
  /** This process's id: a message it sent to the others only (`othersOnly`, tagged `p`) is not delivered back to it. */
  processId?: string;
  /** How often overflow rows older than a minute are deleted; tests shorten it. */
  sweepEveryMs?: number;
}

/**
 * The bus of gateway processes sharing one PostgreSQL database, over LISTEN/NOTIFY. Resolves
 * once this process is listening, so nothing published afterwards is missed. A message too large
 * for a NOTIFY payload is stored in `bus_messages` and announced by id. Subscribers receive a
 * JSON copy of the message (no `undefined`, dates as strings), in the order PostgreSQL sent it.
 * Notifications sent while the listening connection is down are lost, as with any NOTIFY: the
 * connection is made again within a second of the database being back (the client's backoff is
 * capped at 1 s, core/db/database.ts), and `onReconnect` handlers then scan for what was missed.
 */
export async function createPostgresBus(options: PostgresBusOptions): Promise<Bus> {
  const { client, db, logger } = options;
  const subscribers = createSubscribers(logger);
  let closed = false;
  let listened = false;
  // Deliveries run one after another: an overflow message must be read from its row first, and
  // a small message sent after it must not overtake it.
  let deliveries: Promise<void> = Promise.resolve();
  const reconnectHandlers = new Set<() => void>();

  async function receive(payload: string): Promise<void> {
    const notice = parseNotice(payload);
    if (!notice) {
      logger.warn({ payload: payload.slice(0, 200) }, "bus ignored a malformed notification");
      return;
    }
    // Only read an overflow row if someone here wants it.
    if (closed || !subscribers.has(notice.c) || (notice.p !== undefined && notice.p === options.processId)) return;
    if ("m" in notice) return subscribers.deliver(notice.c, notice.m);
    const [row] = await db.select({ payload: busMessages.payload }).from(busMessages).where(eq(busMessages.id, notice.r));
    if (!row) {
      logger.warn({ channel: notice.c, bus_message_id: notice.r }, "bus message row is gone (swept before it was read)");
      return;
    }
    if (!closed) subscribers.deliver(notice.c, row.payload);
  }

  const { unlisten } = await client.listen(
    NOTIFY_CHANNEL,
    (payload) => {
      if (closed) return;
      deliveries = deliveries.then(() => receive(payload)).catch((error) => logger.error({ err: error }, "bus message could not be delivered"));
    },
    () => {
      // postgres.js listens again on a new connection after losing one; a gap means lost
      // messages, so everyone waiting on the bus scans for pending work now.
      if (listened && !closed) {
        logger.warn("bus listening again after a lost connection; scanning for work announced meanwhile");
        for (const handler of [...reconnectHandlers]) {
          try {
            handler();
          } catch (error) {
            logger.error({ err: error }, "bus reconnect handler failed");
          }
        }
      }
      listened = true;
    },
  );

  const sweep = setInterval(() => {
    // The database's clock, not this process's: processes' clocks may disagree.
    db.delete(busMessages)
      .where(lt(busMessages.createdAt, sql`now() - interval '60 seconds'`))
      .catch((error: unknown) => logger.warn({ err: error }, "bus sweep failed"));
  }, options.sweepEveryMs ?? SWEEP_EVERY_MS);
  sweep.unref();

  return {
    async publish(channel, message, publishOptions) {
      // Through the caller's transaction, PostgreSQL holds the NOTIFY (and the overflow row)
      // until commit and drops both on rollback.
      const executor = publishOptions?.tx ?? db;
      const origin = publishOptions?.othersOnly && options.processId ? { p: options.processId } : {};
      // The wire shape, which agentline_open_turn (core/db/functions/) writes too: c, p, then m or r.
      let payload = JSON.stringify({ c: channel, ...origin, m: message });
      if (Buffer.byteLength(payload, "utf8") > NOTIFY_MAX_BYTES) {
        const [row] = await executor.insert(busMessages).values({ payload: message }).returning({ id: busMessages.id });
        payload = JSON.stringify({ c: channel, ...origin, r: row!.id });
      }
      // Raw SQL: the query builder has no NOTIFY, and client.notify would bypass the transaction.
      await executor.execute(sql`select pg_notify(${NOTIFY_CHANNEL}, ${payload})`);
    },
    subscribe: subscribers.subscribe,
    announce: subscribers.deliver,
    onReconnect(handler) {
      reconnectHandlers.add(handler);
      return () => reconnectHandlers.delete(handler);
    },
    async close() {
      if (closed) return;
      // After a reconnect, postgres.js's unlisten no longer removes our listener (its re-listen
      // registers a copy), so the flag and the cleared handlers are what stop delivery.
      closed = true;
      clearInterval(sweep);
      reconnectHandlers.clear();
      subscribers.clear();
      try {
        await unlisten();
      } catch (error) {
        // The client may already be ended, which stops listening anyway.
        logger.debug({ err: error }, "bus unlisten failed");
      }
    },
  };
}

type Notice = ({ c: string; m: Record<string, unknown> } | { c: string; r: number }) & { p?: string };

// Anyone with access to the database can NOTIFY on the channel; accept only our own shape.
function parseNotice(payload: string): Notice | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { c, m, r, p } = value as { c?: unknown; m?: unknown; r?: unknown; p?: unknown };
  if (typeof c !== "string") return undefined;
  const origin = typeof p === "string" ? { p } : {};
  if (typeof m === "object" && m !== null && !Array.isArray(m)) return { c, m: m as Record<string, unknown>, ...origin };
  if (typeof r === "number" && Number.isSafeInteger(r)) return { c, r, ...origin };
  return undefined;
}
