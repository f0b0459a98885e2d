import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DatabaseHandle, openDatabase } from "../../core/db/database.js";
import { createLogger } from "../../core/logger.js";
import { inAccountScope } from "../../core/request-scope.js";
import { freshDatabase, onPostgres } from "../support/service.js";

// The database's share between tenants: one account's burst of statements waits behind itself,
// not in front of another account's statement. On PGlite (one connection, in this thread) a
// scheduler takes turns between accounts and lets the event loop turn between statements; on
// PostgreSQL one account has at most as many statements at the pool as it has connections.
let database: Awaited<ReturnType<typeof freshDatabase>>;
let handle: DatabaseHandle;
beforeAll(async () => {
  database = await freshDatabase();
  handle = await openDatabase({ url: database.url, pglite: database.pglite, dataDir: "memory://", logger: createLogger("silent") });
});
afterAll(async () => {
  await handle?.close();
  await database?.drop();
});

// About a millisecond of work each: enough that 1,000 of them are a second of the database.
const BUSY = "select count(*) as n from generate_series(1, 20000)";

describe("the database's fair share", () => {
  it("answers another account's statement after a few of a flooding account's 1,000, not after all of them", async () => {
    let flooderDone = 0;
    const flood = Array.from({ length: 1_000 }, () => inAccountScope("acc_flooder", () => handle.rows(BUSY, []).then(() => flooderDone++)));
    // Queued after the whole burst.
    await new Promise((resolve) => setImmediate(resolve));
    const doneBefore = await inAccountScope("acc_bystander", () => handle.rows("select 1", []).then(() => flooderDone));
    await Promise.all(flood);
    // PGlite: one of the flooder's per turn; PostgreSQL: the pool's 10, and those already sent.
    expect(doneBefore).toBeLessThan(onPostgres ? 40 : 10);
  });

  it.skipIf(onPostgres)("lets the event loop turn while the embedded database works through a burst", async () => {
    const gaps: number[] = [];
    let last = performance.now();
    const ticker = setInterval(() => {
      gaps.push(performance.now() - last);
      last = performance.now();
    }, 1);
    try {
      await Promise.all(Array.from({ length: 500 }, () => inAccountScope("acc_flooder", () => handle.rows(BUSY, []))));
      gaps.push(performance.now() - last);
    } finally {
      clearInterval(ticker);
    }
    // Statements run in turns of a few milliseconds; before, the burst was one chain of
    // microtasks and no timer fired until it was done.
    expect(Math.max(...gaps)).toBeLessThan(250);
  });
});
