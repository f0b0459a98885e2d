/**
 * GET /v1/calls/{id} on two builds at once, in pairs: the CPU each request costs (the service's
 * process plus PostgreSQL's backends) and requests per second, base then new, new then base,
 * alternating. Both services are up for the whole run and each pair is measured within seconds,
 * so a VM whose speed moves from minute to minute moves both sides of a pair alike; the sequential
 * rounds of bench:compare cannot tell a 10% difference in the GET from that drift.
 *
 * Usage: BENCH_BASE_DIR=<a built checkout> npx tsx bench/get-pairs.ts
 *   BENCH_NEW_DIR (default this checkout), BENCH_PAIRS (10), BENCH_HTTP_SECONDS (5),
 *   BENCH_DATABASES (postgresql,pglite). Build each checkout first (npm ci, npm run build).
 */
import autocannon from "autocannon";
import { projectRoot } from "../harness/process.js";
import { writeResults } from "../harness/results.js";
import { DATABASES, round, type Setup, setUp } from "./support.js";

const baseDir = process.env.BENCH_BASE_DIR;
if (!baseDir) throw new Error("BENCH_BASE_DIR: a checkout of the base commit, installed and built");
const newDir = process.env.BENCH_NEW_DIR ?? projectRoot;
const PAIRS = Number(process.env.BENCH_PAIRS ?? 10);
const SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 5);

/** One build's service with a call to read, and a way to measure a burst of GETs of it. */
async function side(database: string, root: string) {
  const setup: Setup = await setUp(database, undefined, root);
  const { service, apiKey } = setup;
  const headers = { authorization: `Bearer ${apiKey}` };
  const post = async (path: string, body: unknown) =>
    (await (
      await fetch(service.baseUrl + path, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) })
    ).json()) as Record<string, string>;
  const { agent_id } = await post("/v1/agents", { name: "get-pairs" });
  await post("/v1/numbers", { agent_id });
  const { call_id } = await post("/v1/calls", { agent_id, to_number: "+14155550142" });
  const url = `${service.baseUrl}/v1/calls/${call_id}`;
  const cpuSeconds = async () => {
    const { service, database } = await setup.cpuSeconds();
    return service + database;
  };
  await autocannon({ url, connections: 32, duration: 3, headers });
  return {
    async burst() {
      const before = await cpuSeconds();
      const result = await autocannon({ url, connections: 32, duration: SECONDS, headers });
      const cpu = (await cpuSeconds()) - before;
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
      return { cpu_us_per_get: round((cpu * 1e6) / result.requests.total), requests_per_second: Math.round(result.requests.average) };
    },
    async stop() {
      await service.stop();
      await setup.cleanup();
    },
  };
}

const geometricMean = (xs: number[]) => round(Math.exp(xs.reduce((sum, x) => sum + Math.log(x), 0) / xs.length));

const results: Record<string, unknown> = {};
for (const database of DATABASES) {
  const base = await side(database, baseDir);
  const next = await side(database, newDir);
  try {
    const pairs: Array<{ base: Awaited<ReturnType<typeof base.burst>>; new: Awaited<ReturnType<typeof base.burst>> }> = [];
    for (let i = 0; i < PAIRS; i++) {
      const first = i % 2 === 0 ? "base" : "new";
      const a = await (first === "base" ? base : next).burst();
      const b = await (first === "base" ? next : base).burst();
      pairs.push(first === "base" ? { base: a, new: b } : { base: b, new: a });
    }
    const cpu = geometricMean(pairs.map((p) => p.new.cpu_us_per_get / p.base.cpu_us_per_get));
    const rps = geometricMean(pairs.map((p) => p.new.requests_per_second / p.base.requests_per_second));
    results[database] = { cpu_per_get_new_over_base: cpu, requests_per_second_new_over_base: rps, pairs };
    process.stdout.write(`${database}: CPU per GET new/base ${cpu} (lower is better); requests/s new/base ${rps} (higher is better), ${PAIRS} pairs\n`);
    for (const p of pairs)
      process.stdout.write(`  ${p.base.cpu_us_per_get} → ${p.new.cpu_us_per_get} µs, ${p.base.requests_per_second} → ${p.new.requests_per_second}/s\n`);
  } finally {
    await base.stop();
    await next.stop();
  }
}
const file = writeResults("get-pairs.json", {
  benchmark: "get-pairs",
  date: new Date().toISOString(),
  base_dir: baseDir,
  new_dir: newDir,
  seconds: SECONDS,
  results,
});
process.stdout.write(`written to ${file}\n`);
