import { randomBytes } from "node:crypto";
import { sql } from "drizzle-orm";
import postgres from "postgres";
import { type Executor, executeRows } from "../../core/db/database.js";

/** The PostgreSQL server the suite runs against, or undefined to run on PGlite only. */
export function adminUrl(): string | undefined {
  return process.env.TEST_DATABASE_URL || undefined;
}

/** The URL of another database on the TEST_DATABASE_URL server. */
export function databaseUrl(name: string): string {
  const url = new URL(adminUrl()!);
  url.pathname = "/" + name;
  return url.toString();
}

/** Clones the migrated template into a fresh database; returns its URL and a function dropping it. */
export async function createTestDatabase(template: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `agentline_t_${randomBytes(6).toString("hex")}`;
  const sql = postgres(adminUrl()!, { max: 1, onnotice: () => {} });
  try {
    // Concurrent clones of one template can collide on its lock; a short retry settles it.
    for (let attempt = 0; ; attempt++) {
      try {
        await sql.unsafe(`create database ${name} template ${template}`);
        break;
      } catch (error) {
        if (attempt >= 20 || !/being accessed by other users/.test(String(error))) throw error;
        await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
      }
    }
  } finally {
    await sql.end();
  }
  return {
    url: databaseUrl(name),
    async drop() {
      const admin = postgres(adminUrl()!, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/** Waits until n statements of db's database wait for a lock (PostgreSQL only: PGlite runs one at a time). */
export async function statementsWaitingForALock(db: Executor, n: number): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    const [row] = await executeRows<{ n: number }>(
      db,
      sql`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`,
    );
    if (row!.n >= n) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`expected ${n} statements waiting for a lock`);
}
