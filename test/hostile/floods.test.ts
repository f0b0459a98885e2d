import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../core/db/database.js";
import { agents } from "../../core/db/schema/agents.js";
import { newId } from "../../core/ids.js";
import { createLogger } from "../../core/logger.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { requestFlood, socketFlood } from "../../harness/flooder.js";
import { percentile } from "../../harness/percentile.js";
import { freePort, type ServiceProcess, spawnService } from "../../harness/process.js";
import { type Bystander, bystander } from "../support/bystander.js";
import { databaseForProcess } from "../support/mcp.js";

// One account floods the service; another tenant's GET must stay quick and every one of its
// requests must succeed. The bounds are generous (a loaded 2-core VM runs these): the figures
// themselves are bench/floods.ts's, and docs/decisions/0069-database-fair-share.md keeps them.
// A flood's bystander p50 may be 10 times its idle p50, and never less than FLOOR_MS.
const FLOOR_MS = 100;
const SLOWEST_MS = 3_000;

// The service runs in a process of its own, on disk, as it does in production: run in this
// process, or on an in-memory PGlite, it was never held up by the 2,000 sockets as a remote
// client's burst held it.
let service: ServiceProcess;
let database: Awaited<ReturnType<typeof databaseForProcess>>;
let flooder: TestAccount;
const flooderAgents = Array.from({ length: 2_001 }, () => newId("agt"));
let other: Bystander;
let idleP50: number;
beforeAll(async () => {
  database = await databaseForProcess();
  const handle = await openDatabase({ url: database.env.DATABASE_URL, dataDir: database.env.DATA_DIR ?? "unused", logger: createLogger("silent") });
  flooder = await createAccount(handle);
  await handle.db.insert(agents).values(flooderAgents.map((agentId, i) => ({ agentId, accountId: flooder.accountId, name: `flooder ${i}` })));
  const account = await createAccount(handle);
  await handle.close();
  // A fixed port: at LOG_LEVEL=warn there is no "listening" line to read it from.
  // The flood comes from one account, not one address: an attacker has many (the per-address
  // cap has its own test, test/hostile/connections.test.ts).
  service = await spawnService(
    { ...database.env, PORT: String(await freePort()), LOG_LEVEL: "warn", ACCOUNT_MAX_AGENTS: "2001", IP_MAX_CONNECTIONS: "100000" },
    ["node", "dist/bin/agentline.js", "serve"],
  );
  // Its GETs keep one connection: a new one would wait behind the flood's in the kernel's accept
  // queue, which measures the listen backlog, not whether the service serves the other tenant.
  other = await bystander(service, account, { oneConnection: true });
  await other.sample(30);
  idleP50 = percentile(await other.sample(60), 50);
});
afterAll(async () => {
  await service?.stop();
  await database?.drop();
});

/** The bystander's GETs, one after another, until `until` settles (and at least `least` of them). */
async function sampleWhile(until: Promise<unknown>, least = 20): Promise<number[]> {
  let settled = false;
  void until.finally(() => (settled = true)).catch(() => {});
  const latencies: number[] = [];
  while (!settled || latencies.length < least) latencies.push(await other.check());
  return latencies;
}

function expectServed(latencies: number[], flood: string) {
  const p50 = percentile(latencies, 50);
  const figures = `${flood}: bystander p50 ${p50.toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms over ${latencies.length} GETs; idle p50 ${idleP50.toFixed(1)} ms`;
  expect(p50, figures).toBeLessThan(Math.max(10 * idleP50, FLOOR_MS));
}

const waitCall = (timeoutSeconds: number, signal?: AbortSignal) =>
  fetch(`${service.baseUrl}/mcp`, {
    method: "POST",
    signal,
    headers: { authorization: `Bearer ${flooder.apiKey}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "wait_for_event", arguments: { timeout_seconds: timeoutSeconds } } }),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));

describe("one account's flood leaves another tenant served", () => {
  it("500 long polls: 20 wait, the other 480 are refused at once, naming the limit", async () => {
    const stop = new AbortController();
    const answers: Array<{ status: number; body: any }> = [];
    // A wait beyond account_waits is a tool result with isError; a request beyond account_requests (500 at once may pass 200) a 429.
    const waitRefusals = () => answers.filter((a) => a.status === 200 && a.body.result.isError);
    const requestRefusals = () => answers.filter((a) => a.status === 429);
    const refused = new Promise<void>((resolve) => {
      setTimeout(resolve, 10_000);
      for (let i = 0; i < 500; i++) {
        void waitCall(45, stop.signal)
          .then((answer) => {
            answers.push(answer);
            if (answers.length === 480) resolve();
          })
          .catch(() => {});
      }
    });
    try {
      const latencies = await sampleWhile(refused);
      expect(waitRefusals().length + requestRefusals().length).toBe(480);
      expect(waitRefusals()[0]!.body.result.content[0].text).toContain('"limit":"account_waits","max":20');
      for (const refusal of requestRefusals()) expect(refusal.body).toMatchObject({ code: "limit_reached", limit: "account_requests" });
      // Meanwhile the 20 are still waiting.
      latencies.push(...(await other.sample(40)));
      expect(answers).toHaveLength(480);
      expectServed(latencies, "500 waits");
    } finally {
      stop.abort();
    }
  });

  it("2,000 relay sockets opened at once: the bystander is served while they open and once they are open", async () => {
    const flood = socketFlood(service.baseUrl, flooder.apiKey, flooderAgents.slice(1));
    try {
      const opening = await sampleWhile(flood.settled);
      const { opened, refused } = await flood.settled;
      // A cap on sockets per account may refuse some: each is either open or refused.
      expect(opened + refused).toBe(2_000);
      expectServed(opening, "2,000 sockets opening");
      // The reported attack held one GET for 10 s; a few may be slow on a loaded machine, none for long.
      expect(Math.max(...opening)).toBeLessThan(SLOWEST_MS);
      expectServed(await other.sample(40), "2,000 sockets open");
    } finally {
      flood.close();
    }
  });

  it("1,000 requests kept in flight: those beyond account_requests are refused, and the bystander is served", async () => {
    const flood = requestFlood(`${service.baseUrl}/v1/agents/${flooderAgents[0]}`, flooder.apiKey, 1_000, 5);
    // autocannon's connections open first.
    await new Promise((r) => setTimeout(r, 1_000));
    const latencies: number[] = [];
    const until = Date.now() + 3_000;
    while (Date.now() < until) latencies.push(await other.check());
    const answers = await flood;
    expect(answers["4xx"], JSON.stringify(answers)).toBeGreaterThan(0);
    expect(answers["5xx"]).toBe(0);
    expectServed(latencies, "1,000 requests in flight");
  });
});
