import type { Executor } from "./db/database.js";
import type { Logger } from "./logger.js";

export interface PublishOptions {
  /**
   * Publish as part of this transaction: the message goes out only if, and when, it commits.
   * (On PostgreSQL a NOTIFY inside a transaction is held until commit. On PGlite there is one
   * connection, so a subscriber's reads wait for the transaction to end before they run.)
   */
  tx?: Executor;
}

/**
 * Messages between the processes that share one database: a live thing pinned to one process (a
 * relay socket, a call's media session) is reached from the others through the bus. In-process
 * on PGlite (there is only one process); LISTEN/NOTIFY on PostgreSQL. Messages are small: ids
 * and states, which the receiver reads from the database. Every process receives every message,
 * its own included.
 */
export interface Bus {
  publish(channel: string, message: Record<string, unknown>, options?: PublishOptions): Promise<void>;
  /** Calls handler for every message on channel, from any process; returns the unsubscribe. */
  subscribe(channel: string, handler: (message: Record<string, unknown>) => void): () => void;
  close(): Promise<void>;
}

/** The bus of a single process. A handler that throws is logged; the others still get the message. */
export function createLocalBus(logger: Logger): Bus {
  const handlers = new Map<string, Set<(message: Record<string, unknown>) => void>>();
  return {
    async publish(channel, message) {
      // Delivered on a later tick, like a message that went over the wire.
      queueMicrotask(() => {
        for (const handler of [...(handlers.get(channel) ?? [])]) {
          try {
            handler(message);
          } catch (error) {
            logger.error({ err: error, channel }, "bus handler failed");
          }
        }
      });
    },
    subscribe(channel, handler) {
      const set = handlers.get(channel) ?? new Set();
      handlers.set(channel, set.add(handler));
      return () => set.delete(handler);
    },
    async close() {
      handlers.clear();
    },
  };
}
