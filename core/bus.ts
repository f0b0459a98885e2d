import type { Executor } from "./db/database.js";
import type { Logger } from "./logger.js";

export interface PublishOptions {
  /**
   * Publish as part of this transaction: the message goes out only if, and when, it commits.
   * (On PostgreSQL a NOTIFY inside a transaction is held until commit. On PGlite there is one
   * connection, so a subscriber's reads wait for the transaction to end before they run.)
   */
  tx?: Executor;
  /**
   * Only the other processes: the caller hands this process's receivers the message from memory
   * itself (with `announce`, after its transaction commits). A no-op on the single-process bus.
   */
  othersOnly?: boolean;
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
  /** Hands a message to this process's subscribers now, from memory (not to other processes). */
  announce(channel: string, message: Record<string, unknown>): void;
  /**
   * Calls handler each time the bus is listening again after a lost connection: messages sent
   * meanwhile were missed, so whoever waits on them scans for pending work. Returns the unsubscribe.
   */
  onReconnect(handler: () => void): () => void;
  close(): Promise<void>;
}

type Handler = (message: Record<string, unknown>) => void;

/**
 * The handlers of one process's bus, by channel. `deliver` calls each; one that throws (or whose
 * promise rejects) is logged, and the others still get the message.
 */
export function createSubscribers(logger: Logger) {
  const handlers = new Map<string, Set<Handler>>();
  return {
    subscribe(channel: string, handler: Handler): () => void {
      let set = handlers.get(channel);
      if (!set) handlers.set(channel, (set = new Set()));
      set.add(handler);
      const own = set;
      return () => {
        own.delete(handler);
        if (own.size === 0 && handlers.get(channel) === own) handlers.delete(channel);
      };
    },
    has(channel: string): boolean {
      return (handlers.get(channel)?.size ?? 0) > 0;
    },
    deliver(channel: string, message: Record<string, unknown>): void {
      for (const handler of [...(handlers.get(channel) ?? [])]) {
        try {
          const result: unknown = handler(message);
          if (result instanceof Promise) result.catch((error) => logger.error({ err: error, channel }, "bus handler failed"));
        } catch (error) {
          logger.error({ err: error, channel }, "bus handler failed");
        }
      }
    },
    clear(): void {
      handlers.clear();
    },
  };
}

/** The bus of a single process. */
export function createLocalBus(logger: Logger): Bus {
  const subscribers = createSubscribers(logger);
  return {
    async publish(channel, message, options) {
      if (options?.othersOnly) return;
      // Delivered on a later tick, like a message that went over the wire.
      queueMicrotask(() => subscribers.deliver(channel, message));
    },
    subscribe: subscribers.subscribe,
    announce: subscribers.deliver,
    // One process, no connection to lose.
    onReconnect: () => () => {},
    async close() {
      subscribers.clear();
    },
  };
}
