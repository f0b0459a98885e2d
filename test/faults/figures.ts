import { readFileSync } from "node:fs";
import postgres from "postgres";
import { inject } from "vitest";
import { openDatabase } from "../../core/db/database.js";
import { createLogger } from "../../core/logger.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { resultsFile, writeResults } from "../../harness/results.js";
import { adminUrl, createTestDatabase } from "../support/postgres.js";

/**
 * Records a measured figure beside its goal in faults.json in the results folder
 * (harness/results.ts), under FAULTS_LABEL ("after" unless set; the figures of the code before
 * the fixes were taken with "before"). Figures are written before the test asserts on them, so
 * a failing run still reports them.
 */
export function recordFigure(name: string, value: number | string | boolean, goal: string): void {
  const label = process.env.FAULTS_LABEL || "after";
  const file = resultsFile("faults.json");
  let all: Record<string, Record<string, { value: unknown; goal: string }>> = {};
  try {
    all = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    // first figure
  }
  all[label] = { ...all[label], [name]: { value, goal } };
  writeResults("faults.json", all, file);
}

/** A database of its own on the PostgreSQL server, an account in it, and a direct client for checks. */
export async function faultDatabase() {
  const database = await createTestDatabase(inject("postgresTemplate")!);
  const handle = await openDatabase({ url: database.url, dataDir: "unused", logger: createLogger("silent") });
  const account: TestAccount = await createAccount({ db: handle.db });
  await handle.close();
  const sql = postgres(database.url, { max: 2, onnotice: () => {} });
  return {
    ...database,
    account,
    sql,
    name: new URL(database.url).pathname.slice(1),
    /** The same database reached through a proxy listening on `port`. */
    urlVia: (port: number) => {
      const url = new URL(database.url);
      url.port = String(port);
      return url.toString();
    },
    async close() {
      await sql.end({ timeout: 5 });
      await database.drop();
    },
  };
}

/** The port of the PostgreSQL server the suite runs against. */
export function postgresPort(): number {
  return Number(new URL(adminUrl()!).port || 5432);
}

/** What must hold after any fault: every account's balance is the sum of its ledger. */
export async function ledgerMismatches(sql: postgres.Sql): Promise<unknown[]> {
  return [
    ...(await sql`
    select a.account_id, a.balance_micros, coalesce(sum(l.amount_micros), 0) as ledger
    from accounts a left join ledger_entries l on l.account_id = a.account_id
    group by a.account_id, a.balance_micros
    having a.balance_micros <> coalesce(sum(l.amount_micros), 0)`),
  ];
}

export const serve = ["node", "dist/bin/agentline.js", "serve"];

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * What must hold after any fault: every committed event was delivered (relay or webhook), is
 * back in the mailbox, or still has a webhook delivery under way (pending or sending, not given
 * up). Returns the event ids that are none of these: lost.
 */
export async function lostEvents(sql: postgres.Sql, relayed: ReadonlySet<string> = new Set()): Promise<string[]> {
  const rows = await sql<{ event_id: string }[]>`
    select e.event_id from events e
    where e.status <> 'delivered' and e.route <> 'mailbox'
      and not exists (select 1 from webhook_deliveries d where d.event_seq = e.seq and d.status in ('pending', 'sending'))`;
  return rows.map((r) => r.event_id).filter((id) => !relayed.has(id));
}
