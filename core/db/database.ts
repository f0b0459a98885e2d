import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import type { SQLWrapper } from "drizzle-orm";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import type { Logger } from "../logger.js";
import { lockDataDir } from "./data-dir-lock.js";
import { fairPglite } from "./fair-queue.js";
import { guardClient, guardTransactions } from "./guard.js";
import { migrationsFolder } from "./paths.js";
import { TenantGate } from "./tenant-gate.js";
import type { Database, Executor } from "./types.js";

// The types live in a leaf file that guard.ts can read too; the rest of core imports them from here.
export type { Database, Executor, Transaction } from "./types.js";

/**
 * The rows of a raw statement (`db.execute`): postgres.js answers an array of rows, PGlite an
 * object holding them.
 */
export async function executeRows<Row>(db: Executor, query: SQLWrapper): Promise<Row[]> {
  const result = (await db.execute(query)) as unknown as Row[] | { rows: Row[] };
  return Array.isArray(result) ? result : result.rows;
}

/** An open database: the drizzle handle plus what the process needs to manage it. */
export interface DatabaseHandle {
  db: Database;
  kind: "pglite" | "postgres";
  /** The postgres.js client, for LISTEN/NOTIFY; undefined on PGlite. */
  postgresClient: postgres.Sql | undefined;
  /**
   * The rows of one statement written with positional parameters ($1, $2, …), outside any
   * transaction: for the live turn's function calls, whose text is fixed, so that no query is
   * built on every turn (drizzle's building was a twentieth of a turn's CPU). Bound by the
   * request's deadline like every statement, and prepared on PostgreSQL.
   */
  rows<Row>(text: string, parameters: unknown[]): Promise<Row[]>;
  /** Throws unless the database answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** postgres:// URL; unset means embedded PGlite. */
  url?: string | undefined;
  /** PGlite data directory, or `memory://`. */
  dataDir: string;
  /** An already-created PGlite (tests load a migrated template this way). */
  pglite?: PGlite;
  logger: Logger;
  /**
   * The request deadline (REQUEST_DEADLINE_MS). On PostgreSQL it is also every statement's
   * `statement_timeout`, so the server stops work nobody waits for any more.
   */
  deadlineMs?: number;
  /**
   * Leaves the schema as it is (default: apply pending migrations). For a tool that works on a
   * database another build migrated, whose migrations this one must not add to.
   */
  migrate?: boolean;
}

/** Opens PostgreSQL when a URL is given, else embedded PGlite, and applies pending migrations (unless `migrate: false`). */
export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  const handle = options.url ? openPostgres(options.url, options.deadlineMs ?? DEFAULT_DEADLINE_MS) : await openPglite(options);
  guardTransactions(handle.db);
  try {
    if (options.migrate !== false) await applyMigrations(handle, options.url);
  } catch (error) {
    await handle.close();
    throw error;
  }
  options.logger.debug({ kind: handle.kind }, "database ready");
  return handle;
}

async function openPglite(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  let client = options.pglite;
  let unlock = () => {};
  if (!client) {
    const dataDir = options.dataDir === "memory://" ? "memory://" : resolve(options.dataDir);
    if (dataDir !== "memory://") {
      mkdirSync(dataDir, { recursive: true });
      unlock = lockDataDir(dataDir);
    }
    try {
      client = await PGlite.create(dataDir);
    } catch (error) {
      unlock();
      throw error;
    }
  }
  const pglite = client;
  // Every statement takes its account's turn on the one connection (fair-queue.ts).
  const fair = fairPglite(pglite);
  const db = drizzlePglite({ client: fair }) as unknown as Database;
  return {
    db,
    kind: "pglite",
    postgresClient: undefined,
    rows: async <Row>(text: string, parameters: unknown[]) => (await fair.query<Row>(text, parameters)).rows,
    ping: async () => {
      if (pglite.closed) throw new Error("database is closed");
      await fair.query("select 1");
    },
    close: async () => {
      if (!pglite.closed) await pglite.close();
      unlock();
    },
  };
}

const DEFAULT_DEADLINE_MS = 10_000;
const POOL_SIZE = 10;

/**
 * Waits between reconnection attempts, in seconds: 50 ms doubling, capped at half a second
 * (postgres.js's own grows to 20 s), so the service and the bus's LISTEN are back within a
 * second of the database.
 */
export function reconnectBackoff(retries: number): number {
  return Math.min(0.05 * 2 ** retries, 0.5);
}

function openPostgres(url: string, deadlineMs: number): DatabaseHandle {
  // The driver runs patched: patches/postgres+3.4.9.patch (docs/decisions/0053-postgres-js-patch.md).
  // A connection that closes between buffering a write and sending it settles its queries with
  // CONNECTION_CLOSED instead of throwing from a setImmediate and ending the process (upstream
  // porsager/postgres#1154 and #1208, fixes proposed in #1168 and #1209, none released in 3.4.9);
  // and the pool's connection queues drop the holes shift() leaves, so they stay fast under steady
  // load (no upstream issue). test/shape/patches.test.ts fails if postgres leaves 3.4.9.
  const client = postgres(url, {
    max: POOL_SIZE,
    onnotice: () => {},
    // A connection that cannot be made within the deadline is of no use to the request waiting for it.
    connect_timeout: Math.max(1, Math.ceil(deadlineMs / 1000)),
    backoff: reconnectBackoff,
    // Notice a dead server in seconds rather than the default minute.
    keep_alive: 5,
    connection: { statement_timeout: deadlineMs, idle_in_transaction_session_timeout: deadlineMs * 2 },
  });
  // One account's statements take at most as many of the pool's connections as there are.
  const guarded = guardClient(client, new TenantGate(POOL_SIZE));
  const db = drizzlePostgres(guarded) as unknown as Database;
  return {
    db,
    kind: "postgres",
    postgresClient: client,
    rows: async <Row>(text: string, parameters: unknown[]) => (await guarded.unsafe(text, parameters as postgres.ParameterOrJSON<never>[])) as unknown as Row[],
    ping: async () => {
      await client`select 1`;
    },
    close: async () => {
      await client.end({ timeout: 5 });
    },
  };
}

// Any fixed number: the advisory lock that lets one of several starting processes migrate.
const MIGRATION_LOCK = 7_240_501;

async function applyMigrations(handle: DatabaseHandle, url: string | undefined): Promise<void> {
  if (handle.kind === "pglite") {
    await migratePglite(handle.db as never, { migrationsFolder });
    return;
  }
  // Several gateway processes may start together; a session-level lock on one dedicated
  // connection makes the others wait until the first has migrated.
  const client = postgres(url!, { max: 1, onnotice: () => {} });
  try {
    await client`select pg_advisory_lock(${MIGRATION_LOCK})`;
    await migratePostgres(drizzlePostgres(client), { migrationsFolder });
    await client`select pg_advisory_unlock(${MIGRATION_LOCK})`;
  } finally {
    await client.end({ timeout: 5 });
  }
}
