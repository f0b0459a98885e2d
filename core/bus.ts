import { EventEmitter } from "node:events";

/**
 * Messages between the processes that share one database: a live thing pinned to one process (a
 * relay socket, a call's media session) is reached from the others through the bus. In-process
 * on PGlite (there is only one process); LISTEN/NOTIFY on PostgreSQL.
 */
export interface Bus {
  publish(channel: string, message: Record<string, unknown>): Promise<void>;
  /** Calls handler for every message on channel, from any process; returns the unsubscribe. */
  subscribe(channel: string, handler: (message: Record<string, unknown>) => void): () => void;
  close(): Promise<void>;
}

/** The bus of a single process. */
export function createLocalBus(): Bus {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    async publish(channel, message) {
      // Delivered on the next tick, like a message that went over the wire.
      queueMicrotask(() => emitter.emit(channel, message));
    },
    subscribe(channel, handler) {
      emitter.on(channel, handler);
      return () => emitter.off(channel, handler);
    },
    async close() {
      emitter.removeAllListeners();
    },
  };
}
