/**
 * What the two voice-turn benchmarks share: the live turn's goals (docs/decisions/0064-benchmark-method.md), percentiles, and a service in
 * its own process on a fresh database (PostgreSQL or PGlite) with a funded account in it.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import autocannon from "autocannon";
import postgres from "postgres";
import { openDatabase } from "../core/db/database.js";
import { createLogger } from "../core/logger.js";
import { createAccount } from "../harness/accounts.js";
import { freePort, projectRoot, type ServiceProcess, spawnService } from "../harness/process.js";

export const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
export const DATABASES = (process.env.BENCH_DATABASES ?? "postgresql,pglite").split(",");
export const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 2000);
export const TURNS_ONE = Number(process.env.BENCH_TURNS_ONE ?? 30);
export const TURNS_PACED = Number(process.env.BENCH_TURNS_PACED ?? 10);
export const TURNS_BACK_TO_BACK = Number(process.env.BENCH_TURNS ?? 20);
export const CALLS = Number(process.env.BENCH_CALLS ?? 100);
export const WARM_UP_TURNS = Number(process.env.BENCH_WARM_UP_TURNS ?? 20);
export const HTTP_SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 10);
/** The checkout whose build is measured: this one, or another commit's (bench/compare.ts). */
export const SERVICE_ROOT = process.env.BENCH_SERVICE_ROOT ?? projectRoot;

// The benchmark's own garbage collector, callable between runs (as --expose-gc would make it).
setFlagsFromString("--expose-gc");
const collectGarbage = runInNewContext("gc") as () => void;

export const GOALS = { one_call_p50_ms: 1.5, paced_p99_ms: 5, turns_per_second: 1500, get_call_share_of_hello: 0.5 };

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
export const round = (n: number) => Math.round(n * 100) / 100;
export function summary(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  return { samples: s.length, p50_ms: round(percentile(s, 50)), p99_ms: round(percentile(s, 99)), max_ms: round(s.at(-1)!) };
}

/** CPU seconds used so far, as Setup.cpuSeconds reads them. */
export type CpuSeconds = { service: number; database: number };

/** The CPU used between two readings, each part and their total, in the unit `per` turns seconds into. */
export function cpuUsed(before: CpuSeconds, after: CpuSeconds, per: (seconds: number) => number) {
  const service = after.service - before.service;
  const database = after.database - before.database;
  return { service: per(service), database: per(database), total: per(service + database) };
}

export interface Setup {
  service: ServiceProcess;
  apiKey: string;
  /**
   * CPU seconds used so far by the service's process and by the database's own processes
   * (PostgreSQL's backends; PGlite runs inside the service, its database figure is 0).
   */
  cpuSeconds(): Promise<CpuSeconds>;
  cleanup(): Promise<void>;
}

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on Linux). */
const CLOCK_TICKS = 100;

/** CPU seconds a process has used (user + system), from /proc; 0 once it has gone. */
function processCpuSeconds(pid: number): number {
  try {
    // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/**
 * The service's CPU seconds, read like the database's: setUp starts `node` itself, so the child is
 * the service's process. In 10 ms ticks, fine against the seconds of CPU a measured run uses.
 */
const serviceCpuSeconds = (service: ServiceProcess) => processCpuSeconds(service.child.pid!);

let setUps = 0;

/**
 * A database with an account in it, and the service on it in its own process (LOG_LEVEL=warn:
 * the port is chosen here, readiness is /health). `env(port)` adds settings that need the port;
 * `root` is the checkout whose service runs (BENCH_SERVICE_ROOT, by default this one).
 */
export async function setUp(database: string, env: (port: number) => Record<string, string> = () => ({}), root = SERVICE_ROOT): Promise<Setup> {
  const port = await freePort();
  const settings = { LOG_LEVEL: "warn", TURN_TIMEOUT_MS: "60000", RELAY_WINDOW: "1000", PORT: String(port), ...env(port) };
  const serve = ["node", ...(process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean), "dist/bin/agentline.js", "serve"];
  if (database === "pglite") {
    const dataDir = mkdtempSync(join(tmpdir(), "agentline-bench-"));
    await migrateWithService({ ...settings, DATA_DIR: dataDir }, serve, root);
    const handle = await openDatabase({ dataDir, logger: createLogger("silent"), migrate: root === projectRoot });
    const { apiKey } = await createAccount(handle, "bench@example.com", { creditMicros: 10_000_000_000 });
    await handle.close();
    const service = await spawnService({ ...settings, DATA_DIR: dataDir }, serve, root);
    return {
      service,
      apiKey,
      cpuSeconds: async () => ({ service: serviceCpuSeconds(service), database: 0 }),
      cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const dbName = `agentline_bench_${process.pid}_${++setUps}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = "/" + dbName;
  await migrateWithService({ ...settings, DATABASE_URL: url.toString() }, serve, root);
  const handle = await openDatabase({ url: url.toString(), dataDir: "unused", logger: createLogger("silent"), migrate: root === projectRoot });
  const { apiKey } = await createAccount(handle, "bench@example.com", { creditMicros: 10_000_000_000 });
  await handle.close();
  const service = await spawnService({ ...settings, DATABASE_URL: url.toString() }, serve, root);
  return {
    service,
    apiKey,
    // The backends serving the service's pool: a backend that closed meanwhile drops out of the sum.
    cpuSeconds: async () => {
      const backends = await admin<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${dbName}`;
      return { service: serviceCpuSeconds(service), database: backends.reduce((sum, { pid }) => sum + processCpuSeconds(pid), 0) };
    },
    cleanup: async () => {
      await admin.unsafe(`drop database if exists ${dbName} with (force)`);
      await admin.end();
    },
  };
}

/**
 * Another checkout's service migrates its database itself, once, before the account is made:
 * this checkout's migrations may be newer than that build knows. This checkout's own service
 * needs no such start (openDatabase migrates).
 */
async function migrateWithService(env: Record<string, string>, serve: string[], root: string): Promise<void> {
  if (root === projectRoot) return;
  const service = await spawnService({ ...env, PORT: String(await freePort()) }, serve, root);
  await service.stop();
}

type TurnRun = { turns_per_second: number } & Record<string, unknown>;

/** Writes a figure to stdout as `label key: json`, as it is measured. */
export function progressLog(label: string) {
  return (key: string, value: unknown) => void process.stdout.write(`${label} ${key}: ${JSON.stringify(value)}\n`);
}

/**
 * The three turn runs, one after the other, each logged as it ends: one call at speech
 * pace, CALLS calls at speech pace, CALLS calls back to back. First a warm-up, measured but left
 * out of the figures: CALLS calls taking WARM_UP_TURNS turns back to back. A server's first
 * thousand turns run partly unoptimised code on a young heap (here the first back-to-back run
 * came out about a quarter slower than the next), which is not how a service in production runs.
 */
export async function turnRuns<R extends TurnRun>(
  log: ReturnType<typeof progressLog>,
  measureRun: (calls: number, turns: number, paceMs: number) => Promise<R>,
) {
  // Each run starts with the benchmark's own heap collected: the client keeps every frame of the
  // run before it, and a full collection of that inside a run paused it 4–15 ms (seen with
  // --trace-gc), which the run then counted as the service's latency.
  const measure = (calls: number, turns: number, paceMs: number) => {
    collectGarbage();
    return measureRun(calls, turns, paceMs);
  };
  if (WARM_UP_TURNS > 0) log("warm-up (not in the figures)", await measure(CALLS, WARM_UP_TURNS, 0));
  const one = await measure(1, TURNS_ONE, PACE_MS);
  log("one call at speech pace", one);
  const paced = await measure(CALLS, TURNS_PACED, PACE_MS);
  log(`${CALLS} calls at speech pace`, paced);
  const backToBack = await measure(CALLS, TURNS_BACK_TO_BACK, 0);
  log(`${CALLS} calls back to back`, backToBack);
  return { one_call: one, paced, back_to_back: backToBack };
}

export const HTTP_WARM_UP_SECONDS = Number(process.env.BENCH_HTTP_WARM_UP_SECONDS ?? 2);

/**
 * Requests per second of GETs on url (autocannon, 32 connections, HTTP_SECONDS), after
 * HTTP_WARM_UP_SECONDS of the same load unmeasured: a server's first second on a path it has
 * not served yet runs unoptimised code (about a tenth slower here), which is not its steady
 * rate. Any non-2xx answer fails the run.
 */
export async function requestsPerSecond(url: string, headers: Record<string, string> = {}): Promise<number> {
  return (await measuredRequests(url, headers)).perSecond;
}

/**
 * autocannon at `url` for BENCH_HTTP_SECONDS after its warm-up; `around` runs just before and
 * after the measured part (to read CPU counters over it alone).
 */
export async function measuredRequests(url: string, headers: Record<string, string> = {}, around?: () => Promise<void>) {
  if (HTTP_WARM_UP_SECONDS > 0) await autocannon({ url, connections: 32, duration: HTTP_WARM_UP_SECONDS, headers });
  await around?.();
  const result = await autocannon({ url, connections: 32, duration: HTTP_SECONDS, headers });
  await around?.();
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return { perSecond: Math.round(result.requests.average), total: result.requests.total };
}

/** What every results file opens with: the benchmark, when, on what, with which settings. */
export function reportHeader(benchmark: string) {
  return {
    benchmark,
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
    settings: {
      pace_ms: PACE_MS,
      turns_one_call: TURNS_ONE,
      turns_paced: TURNS_PACED,
      turns_back_to_back: TURNS_BACK_TO_BACK,
      warm_up_turns: WARM_UP_TURNS,
      calls: CALLS,
      http_seconds: HTTP_SECONDS,
      http_warm_up_seconds: HTTP_WARM_UP_SECONDS,
      connections: 32,
    },
  };
}

/** The turn figures from the three runs, in the table both benchmarks write. */
export function turnFigures(legs: [string, string], runs: Record<"one_call" | "paced" | "back_to_back", TurnRun>) {
  const leg = (run: Record<string, unknown>, name: string, field: "p50_ms" | "p99_ms") => (run[name] as ReturnType<typeof summary>)[field];
  return {
    one_call_at_speech_pace_p50_ms: {
      [legs[0]]: leg(runs.one_call, legs[0], "p50_ms"),
      [legs[1]]: leg(runs.one_call, legs[1], "p50_ms"),
      goal: GOALS.one_call_p50_ms,
    },
    calls_at_speech_pace_p99_ms: {
      calls: CALLS,
      [legs[0]]: leg(runs.paced, legs[0], "p99_ms"),
      [legs[1]]: leg(runs.paced, legs[1], "p99_ms"),
      goal: GOALS.paced_p99_ms,
    },
    back_to_back_turns_per_second: { calls: CALLS, value: runs.back_to_back.turns_per_second, goal: GOALS.turns_per_second },
  };
}

const keepAlive = new Agent({ keepAlive: true });

/**
 * Opens `count` kept-alive connections to the server of url (a GET each, all at once), for the
 * pushes of the run that follows to find open. Without it a run's first hundred pushes each
 * opened a connection at the same moment: their turns took up to 0.8 s, which the run counted
 * in its p99 and, through its slowest call, in its turns per second. An agent runtime keeps its
 * connection open across turns; a connection's setup is not a turn's cost.
 */
export async function openConnections(url: string, count: number): Promise<void> {
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<void>((resolve, reject) => {
          const req = request(url, { agent: keepAlive }, (res) => {
            res.resume();
            res.on("end", resolve);
          });
          req.on("error", reject);
          req.end();
        }),
    ),
  );
}

/**
 * POSTs JSON as an agent's runtime would, on a kept-alive connection. node:http rather than
 * fetch: undici's fetch spends about 1.8 ms of its own per request here, which is the client's
 * share, not the service's.
 */
export function postJson(url: string, token: string, body: unknown): Promise<{ status: number; text: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        agent: keepAlive,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}
