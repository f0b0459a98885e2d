import { randomBytes } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from "vitest";
import type { Bus } from "../../core/bus.js";
import { createPostgresBus } from "../../core/bus-postgres.js";
import type { Database } from "../../core/db/database.js";
import { busMessages } from "../../core/db/schema/bus-messages.js";
import { createLogger, type Logger } from "../../core/logger.js";
import { createTestDatabase } from "../support/postgres.js";
import { onPostgres } from "../support/service.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until check() holds, up to ms. */
async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await sleep(20);
  }
}

/** Everything a bus delivers on one channel. */
function collect(bus: Bus, channel: string): Record<string, unknown>[] {
  const received: Record<string, unknown>[] = [];
  bus.subscribe(channel, (m) => received.push(m));
  return received;
}

/** One "gateway process": its own client pool (and so its own listening connection). */
interface Process {
  client: postgres.Sql;
  db: Database;
  /** A bus on this process's client, closed when the test ends. */
  bus(options?: { logger?: Logger; sweepEveryMs?: number }): Promise<Bus>;
}

function openProcess(url: string, name: string): Process {
  const client = postgres(url, { max: 3, onnotice: () => {}, connection: { application_name: name } });
  const db = drizzle(client) as unknown as Database;
  return {
    client,
    db,
    async bus(options = {}) {
      const bus = await createPostgresBus({ client, db, logger: options.logger ?? createLogger("silent"), ...options });
      onTestFinished(() => bus.close());
      return bus;
    },
  };
}

const channelName = () => `test.${randomBytes(4).toString("hex")}`;

describe.runIf(onPostgres)("the PostgreSQL bus", () => {
  let database: { url: string; drop(): Promise<void> };
  let a: Process;
  let b: Process;

  beforeAll(async () => {
    database = await createTestDatabase(inject("postgresTemplate")!);
    a = openProcess(database.url, "bus-test-a");
    b = openProcess(database.url, "bus-test-b");
  });
  afterAll(async () => {
    await a?.client.end({ timeout: 5 });
    await b?.client.end({ timeout: 5 });
    await database?.drop();
  });

  it("delivers a message published on one process to every process, the publisher included", async () => {
    const [busA, busB] = [await a.bus(), await b.bus()];
    const channel = channelName();
    const onA = collect(busA, channel);
    const onB = collect(busB, channel);
    const elsewhere = collect(busB, channelName());

    await busA.publish(channel, { call_id: "call_1", status: "in-progress" });

    await until(() => onA.length === 1 && onB.length === 1);
    expect(onB).toEqual([{ call_id: "call_1", status: "in-progress" }]);
    expect(onA).toEqual(onB);
    expect(elsewhere).toEqual([]);
  });

  it("carries a message over 8000 bytes intact, in order with the messages around it", async () => {
    const [busA, busB] = [await a.bus(), await b.bus()];
    const channel = channelName();
    const onB = collect(busB, channel);
    const text = "Grüße, 電話 ☎ 𝄞 ".repeat(800);
    expect(Buffer.byteLength(JSON.stringify({ text }))).toBeGreaterThan(20_000);

    await busA.publish(channel, { n: 1, text });
    await busA.publish(channel, { n: 2 });

    await until(() => onB.length === 2);
    expect(onB).toEqual([{ n: 1, text }, { n: 2 }]);
  });

  it("holds a message published in a transaction until the transaction commits", async () => {
    const [busA, busB] = [await a.bus(), await b.bus()];
    const channel = channelName();
    const onA = collect(busA, channel);
    const onB = collect(busB, channel);
    const large = "é".repeat(10_000);

    await a.db.transaction(async (tx) => {
      await busA.publish(channel, { n: 1 }, { tx });
      await busA.publish(channel, { n: 2, large }, { tx });
      await sleep(300);
      expect(onA).toEqual([]);
      expect(onB).toEqual([]);
    });

    await until(() => onA.length === 2 && onB.length === 2);
    expect(onB).toEqual([{ n: 1 }, { n: 2, large }]);
  });

  it("never delivers a message published in a transaction that rolls back", async () => {
    const [busA, busB] = [await a.bus(), await b.bus()];
    const channel = channelName();
    const onB = collect(busB, channel);
    const before = await a.db.select({ id: busMessages.id }).from(busMessages);

    await expect(
      a.db.transaction(async (tx) => {
        await busA.publish(channel, { n: "rolled back" }, { tx });
        await busA.publish(channel, { n: "rolled back", large: "x".repeat(9_000) }, { tx });
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    // Notifications arrive in commit order: once this one is in, the others would have been.
    await busA.publish(channel, { n: "after" });

    await until(() => onB.length >= 1);
    await sleep(100);
    expect(onB).toEqual([{ n: "after" }]);
    expect(await a.db.select({ id: busMessages.id }).from(busMessages)).toEqual(before);
  });

  it("keeps delivering to the other handlers when one throws, and logs the failure", async () => {
    const lines: string[] = [];
    const busA = await a.bus();
    const busB = await b.bus({ logger: createLogger("error", { write: (line: string) => void lines.push(line) }) });
    const channel = channelName();
    busB.subscribe(channel, () => {
      throw new Error("handler broke");
    });
    const onB = collect(busB, channel);

    await busA.publish(channel, { n: 1 });
    await busA.publish(channel, { n: 2 });

    await until(() => onB.length === 2);
    expect(onB).toEqual([{ n: 1 }, { n: 2 }]);
    expect(lines.filter((l) => l.includes("handler broke"))).toHaveLength(2);
  });

  it("delivers nothing more after close", async () => {
    const [busA, busB] = [await a.bus(), await b.bus()];
    const channel = channelName();
    const onA = collect(busA, channel);
    const onB = collect(busB, channel);

    await busB.close();
    await busA.publish(channel, { n: 1 });
    await busA.publish(channel, { n: 2, large: "y".repeat(9_000) });

    await until(() => onA.length === 2);
    await sleep(100);
    expect(onB).toEqual([]);
  });

  it("listens again after its connection is cut, and still stops at close", async () => {
    const [busA, busB] = [await a.bus(), await b.bus()];
    const channel = channelName();
    const onB = collect(busB, channel);

    const cut = await a.client`
      select pg_terminate_backend(pid) as done from pg_stat_activity
      where application_name = 'bus-test-b' and query ilike 'listen%'`;
    expect(cut.length).toBeGreaterThan(0);

    // Whatever is sent while B reconnects is lost; keep sending until B hears again.
    for (let n = 0; onB.length === 0; n++) {
      if (n > 100) throw new Error("B never listened again");
      await busA.publish(channel, { n });
      await sleep(50);
    }

    await busB.close();
    const seen = onB.length;
    const onA = collect(busA, channel);
    await busA.publish(channel, { n: "after close" });
    await until(() => onA.length === 1);
    await sleep(100);
    expect(onB).toHaveLength(seen);
  });

  it("sweeps overflow rows older than a minute and keeps newer ones", async () => {
    const [old] = await a.db
      .insert(busMessages)
      .values({ payload: { n: "old" }, createdAt: sql`now() - interval '2 minutes'` })
      .returning({ id: busMessages.id });
    const [fresh] = await a.db
      .insert(busMessages)
      .values({ payload: { n: "fresh" } })
      .returning({ id: busMessages.id });
    await a.bus({ sweepEveryMs: 50 });

    const exists = async (id: number) => (await a.db.select({ id: busMessages.id }).from(busMessages).where(eq(busMessages.id, id))).length === 1;
    const deadline = Date.now() + 5_000;
    while (await exists(old!.id)) {
      if (Date.now() > deadline) throw new Error("old row was not swept");
      await sleep(50);
    }
    expect(await exists(fresh!.id)).toBe(true);
  });
});
