/**
 * One account floods the service; another tenant's GET is timed meanwhile
 * (docs/decisions/0069-database-fair-share.md). The service runs in its own process on a fresh database on disk
 * (PostgreSQL, then PGlite) with two accounts, the flooder and the bystander. The bystander reads
 * its agent back, one GET after another for FLOOD_SAMPLE_SECONDS, while idle and during each
 * flood:
 *
 *   waits:     FLOOD_WAITS MCP wait_for_event calls of the flooder at once (held 45 s)
 *   sockets:   FLOOD_SOCKETS relay sockets of the flooder opened at once from this process, one
 *              per agent: while they open, then while they stay open
 *   requests:  for each of FLOOD_REQUESTS, that many GETs of the flooder kept in flight
 *              (autocannon, in a process of its own)
 *
 * Each figure is also given as a ratio to the idle run of the same database in the same run.
 * Printed as measured, and written to floods.json in the results folder (harness/results.ts).
 * FLOODS_SERVICE_ROOT runs another checkout's build (its dist/) instead of this one's: the figures
 * before a change, beside these (not written, so they never stand in for this checkout's).
 */
import { setMaxListeners } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { openDatabase } from "../core/db/database.js";
import { agents } from "../core/db/schema/agents.js";
import { newId } from "../core/ids.js";
import { createLogger } from "../core/logger.js";
import { createAccount } from "../harness/accounts.js";
import { requestFlood, socketFlood } from "../harness/flooder.js";
import { percentile } from "../harness/percentile.js";
import { freePort, projectRoot, type ServiceProcess, spawnService } from "../harness/process.js";
import { writeResults } from "../harness/results.js";
import { adminUrl, DATABASES, progressLog, round } from "./support.js";

const WAITS = Number(process.env.FLOOD_WAITS ?? 500);
const SOCKETS = Number(process.env.FLOOD_SOCKETS ?? 2000);
const REQUESTS = (process.env.FLOOD_REQUESTS ?? "200,1000").split(",").map(Number);
const SAMPLE_SECONDS = Number(process.env.FLOOD_SAMPLE_SECONDS ?? 6);
const FLOODS = (process.env.FLOODS ?? "waits,sockets,requests").split(",");
const SERVICE_ROOT = process.env.FLOODS_SERVICE_ROOT ?? projectRoot;

// One kept-alive connection: the bystander is one client making one request at a time.
const bystanderConnection = new Agent({ keepAlive: true, maxSockets: 1 });

function get(url: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: bystanderConnection, headers: { authorization: `Bearer ${token}` } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

interface Setup {
  service: ServiceProcess;
  flooder: string;
  flooderAgents: string[];
  bystander: string;
  bystanderAgent: string;
  cleanup(): Promise<void>;
}

/** A database with both accounts and their agents in it, and the service on it in its own process. */
async function setUp(database: string): Promise<Setup> {
  const dataDir = database === "pglite" ? mkdtempSync(join(tmpdir(), "agentline-floods-")) : "unused";
  const dbName = `agentline_floods_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  const url = new URL(adminUrl);
  url.pathname = "/" + dbName;
  if (database !== "pglite") await admin.unsafe(`create database ${dbName}`);
  const handle = await openDatabase({ url: database === "pglite" ? undefined : url.toString(), dataDir, logger: createLogger("silent") });
  const flooder = await createAccount(handle, "flooder@example.com");
  const bystander = await createAccount(handle, "bystander@example.com");
  const flooderAgents = Array.from({ length: SOCKETS + 1 }, () => newId("agt"));
  await handle.db.insert(agents).values(flooderAgents.map((agentId, i) => ({ agentId, accountId: flooder.accountId, name: `flooder ${i}` })));
  const bystanderAgent = newId("agt");
  await handle.db.insert(agents).values({ agentId: bystanderAgent, accountId: bystander.accountId, name: "bystander" });
  await handle.close();
  const where: Record<string, string> = database === "pglite" ? { DATA_DIR: dataDir } : { DATABASE_URL: url.toString() };
  // A fixed port: at LOG_LEVEL=warn there is no "listening" line to read it from.
  const settings = { ...where, LOG_LEVEL: "warn", PORT: String(await freePort()), ACCOUNT_MAX_AGENTS: String(SOCKETS + 1), IP_MAX_CONNECTIONS: "100000" };
  const service = await spawnService(settings, ["node", join(SERVICE_ROOT, "dist/bin/agentline.js"), "serve"]);
  return {
    service,
    flooder: flooder.apiKey,
    flooderAgents,
    bystander: bystander.apiKey,
    bystanderAgent,
    async cleanup() {
      if (database === "pglite") rmSync(dataDir, { recursive: true, force: true });
      else await admin.unsafe(`drop database if exists ${dbName} with (force)`);
      await admin.end();
    },
  };
}

/** The bystander's GETs, one after another, for SAMPLE_SECONDS: p50, p99, the slowest, and how many were not a 200. */
async function sampleBystander(setup: Setup) {
  const url = `${setup.service.baseUrl}/v1/agents/${setup.bystanderAgent}`;
  const latencies: number[] = [];
  let failures = 0;
  const until = performance.now() + SAMPLE_SECONDS * 1000;
  while (performance.now() < until) {
    const started = performance.now();
    if ((await get(url, setup.bystander)) !== 200) failures++;
    latencies.push(performance.now() - started);
  }
  return {
    samples: latencies.length,
    p50_ms: round(percentile(latencies, 50)),
    p99_ms: round(percentile(latencies, 99)),
    max_ms: round(Math.max(...latencies)),
    failures,
  };
}

/** Starts count long polls of the flooder; resolves once all but the waiting ones are answered (or after 10 s), with how many were refused. */
async function startWaits(setup: Setup, count: number, signal: AbortSignal): Promise<number> {
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "wait_for_event", arguments: { timeout_seconds: 45 } } });
  const headers = { authorization: `Bearer ${setup.flooder}`, "content-type": "application/json", accept: "application/json, text/event-stream" };
  let refused = 0;
  let answered = 0;
  for (let i = 0; i < count; i++) {
    void fetch(`${setup.service.baseUrl}/mcp`, { method: "POST", headers, body, signal })
      .then(async (res) => {
        const text = await res.text();
        if (res.status !== 200 || text.includes('"isError":true')) refused++;
      })
      .catch(() => {})
      .finally(() => answered++);
  }
  const until = Date.now() + 10_000;
  while (Date.now() < until && answered < count - 20) await new Promise((r) => setTimeout(r, 100));
  return refused;
}

async function run(database: string, log: ReturnType<typeof progressLog>) {
  const setup = await setUp(database);
  try {
    const figures: Record<string, unknown> = {};
    // The service's code paths warmed first; not a figure.
    await sampleBystander(setup);
    const idle = await sampleBystander(setup);
    const withRatios = (sample: typeof idle) => ({ ...sample, p50_ratio: round(sample.p50_ms / idle.p50_ms), p99_ratio: round(sample.p99_ms / idle.p99_ms) });
    figures.idle = idle;
    log("idle", idle);
    const settle = () => new Promise((r) => setTimeout(r, 1_000));

    if (FLOODS.includes("waits")) {
      const stop = new AbortController();
      setMaxListeners(WAITS + 10, stop.signal);
      const refused = await startWaits(setup, WAITS, stop.signal);
      figures.waits = { flood: WAITS, refused, ...withRatios(await sampleBystander(setup)) };
      stop.abort();
      log(`${WAITS} waits`, figures.waits);
      await settle();
    }

    if (FLOODS.includes("sockets")) {
      const flood = socketFlood(setup.service.baseUrl, setup.flooder, setup.flooderAgents.slice(1));
      const opening = await sampleBystander(setup);
      figures.sockets_opening = { flood: SOCKETS, ...(await flood.settled), ...withRatios(opening) };
      log(`${SOCKETS} sockets opening`, figures.sockets_opening);
      figures.sockets_open = { flood: SOCKETS, ...withRatios(await sampleBystander(setup)) };
      log(`${SOCKETS} sockets open`, figures.sockets_open);
      flood.close();
      await settle();
    }

    if (FLOODS.includes("requests")) {
      for (const connections of REQUESTS) {
        const flood = requestFlood(`${setup.service.baseUrl}/v1/agents/${setup.flooderAgents[0]}`, setup.flooder, connections, SAMPLE_SECONDS + 2);
        // autocannon's connections open first.
        await settle();
        const during = await sampleBystander(setup);
        figures[`requests_${connections}`] = { flood: connections, ...withRatios(during), flooder_answers: await flood };
        log(`${connections} requests in flight`, figures[`requests_${connections}`]);
        await settle();
      }
    }
    return figures;
  } finally {
    await setup.service.stop();
    await setup.cleanup();
  }
}

const results: Record<string, unknown> = {
  benchmark: "floods",
  date: new Date().toISOString(),
  service_root: SERVICE_ROOT,
  settings: { waits: WAITS, sockets: SOCKETS, requests: REQUESTS, sample_seconds: SAMPLE_SECONDS },
};
for (const database of DATABASES) results[database] = await run(database, progressLog(database));
if (!process.env.FLOODS_SERVICE_ROOT) {
  process.stdout.write(`written to ${writeResults("floods.json", results)}\n`);
}
process.exit(0);
