import type { Bus } from "./bus.js";
import type { Carrier, CarrierSignals } from "./carrier/carrier.js";
import type { Config } from "./config.js";
import type { Database, DatabaseHandle } from "./db/database.js";
import type { Logger } from "./logger.js";
import type { Mailer } from "./mail/mailer.js";
import type { Metrics } from "./metrics.js";
import type { ServerSecrets } from "./secrets.js";

/**
 * Everything core operations need, built once per process (by `createCore`) and passed down.
 * A leaf module: it names the services by their interfaces, so every domain can import it
 * without importing the composition root that builds the services from those domains.
 */
export interface Core {
  config: Config;
  /** The query builder (drizzle) over the open database. */
  db: Database;
  /** The open database itself: raw statements, its kind, closing it. */
  dbHandle: DatabaseHandle;
  logger: Logger;
  mailer: Mailer;
  secrets: ServerSecrets;
  /** What /metrics shows. */
  metrics: Metrics;
  /** Messages between the processes sharing the database. */
  bus: Bus;
  carrier: Carrier;
  /** Applies what the carrier reports; holds the live turns' filler timers. */
  callEngine: CallEngine;
  /** The public base URL, for links in events; set once the server knows where it listens. */
  baseUrl: string;
  /** This process, among those sharing the database (relay sessions record their holder). */
  processId: string;
  /** Delivers webhook jobs (started unless `runJobs: false`). */
  webhooks: BackgroundJob;
  /** Meters live calls and renews number leases (started unless `runJobs: false`). */
  billing: BackgroundJob & { runOnce(): Promise<void> };
  /** The clock; tests may replace it to move time. */
  now(): Date;
  /** Aborted once the process begins to stop: long waits (wait_for_event) answer at once rather than hold the shutdown. */
  stopping: AbortSignal;
  /** Starts stopping (aborts `stopping`); `close` does it too. The server calls it before draining requests. */
  beginStopping(): void;
  /** Closes what the core opened (the database, the mail transport). */
  close(): Promise<void>;
}

/** The call engine as the domains see it: the carrier's signals, plus the per-turn timers. */
export interface CallEngine extends CarrierSignals {
  /** The call's turn closed (answered, cancelled, or the call ended): its filler is not needed. */
  turnClosed(callId: string, turnId?: string): void;
  close(): void;
}

/** Work a process runs in the background. */
export interface BackgroundJob {
  start(): void;
  close(): Promise<void>;
}
