/**
 * What a JSON body costs the service by its shape, at one size (about 1 MiB, the most a body may
 * be): flat (one long string), wide (arrays nested 64 deep, the most the service reads), just too
 * deep (65) and deep (every byte a bracket). For each, the service's own CPU time per request
 * (from /proc, the service in its own process) and the latency, as ratios to the flat body; then
 * another tenant's GET latency while four clients send deep bodies, beside the same GETs while
 * they send flat ones, and idle. A refused body should cost about what a flat one does. Usage: npm run bench
 * (or `tsx bench/json-bodies.ts`, after a build). Written to json-bodies.json in the results
 * folder (harness/results.ts).
 */
import { readFileSync } from "node:fs";
import { writeResults } from "../harness/results.js";
import { progressLog, reportHeader, round, setUp, summary } from "./support.js";

const MiB = 1024 * 1024;
const REQUESTS = Number(process.env.BENCH_BODY_REQUESTS ?? 20);
const GETS = Number(process.env.BENCH_BODY_GETS ?? 200);
const ATTACKERS = 4;

/** `[[...]]` nested `depth` deep, repeated (comma-separated) to about `bytes`. */
function nestedArrays(depth: number, bytes: number): string {
  const one = "[".repeat(depth) + "]".repeat(depth);
  return Array.from({ length: Math.floor(bytes / (one.length + 1)) }, () => one).join(",");
}

// Each a body of POST /v1/agents: the flat one and the numbers are parsed and refused by
// validation (a 422); the nested ones, over the depth or container limit, before they are parsed
// (a 400).
const BODIES: Record<string, string> = {
  flat: JSON.stringify({ name: "x", description: "y".repeat(MiB - 64) }),
  // Leaves are cheap to build, but not free: half a million numbers.
  numbers: `{"name":"x","metadata":{"k":[${Array(MiB / 2 - 32)
    .fill("1")
    .join(",")}]}}`,
  // The body, metadata and its array are three levels: 61 more make 64.
  wide_64_deep: `{"name":"x","metadata":{"k":[${nestedArrays(61, MiB - 64)}]}}`,
  wide_65_deep: `{"name":"x","metadata":{"k":[${nestedArrays(62, MiB - 64)}]}}`,
  deep: "[".repeat(MiB / 2 - 1) + "]".repeat(MiB / 2 - 1),
};

/** The process's CPU time so far, in ms (user and system; /proc counts in ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function main() {
  const log = progressLog("json-bodies");
  const { service, apiKey, cleanup } = await setUp("pglite");
  const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
  const post = async (body: string) => {
    const started = performance.now();
    const res = await fetch(`${service.baseUrl}/v1/agents`, { method: "POST", headers, body });
    await res.arrayBuffer();
    if (res.status < 400) throw new Error(`a body of the benchmark was accepted (${res.status})`);
    return { ms: performance.now() - started, status: res.status };
  };
  try {
    const pid = service.child.pid!;
    const bodies: Record<string, Record<string, number>> = {};
    for (const [name, body] of Object.entries(BODIES)) {
      for (let i = 0; i < 3; i++) await post(body);
      const cpuBefore = cpuMs(pid);
      const answers = [];
      for (let i = 0; i < REQUESTS; i++) answers.push(await post(body));
      const latencies = answers.map((a) => a.ms);
      bodies[name] = {
        bytes: Buffer.byteLength(body),
        status: answers[0]!.status,
        cpu_ms_per_request: round((cpuMs(pid) - cpuBefore) / REQUESTS),
        latency_p50_ms: summary(latencies).p50_ms,
      };
      log(name, bodies[name]);
    }
    const flat = bodies.flat!;
    for (const figures of Object.values(bodies)) {
      figures.cpu_ratio_to_flat = round(figures.cpu_ms_per_request! / Math.max(flat.cpu_ms_per_request!, 1));
      figures.latency_ratio_to_flat = round(figures.latency_p50_ms! / flat.latency_p50_ms!);
    }

    const agent = (await (await fetch(`${service.baseUrl}/v1/agents`, { method: "POST", headers, body: JSON.stringify({ name: "bystander" }) })).json()) as {
      agent_id: string;
    };
    const gets = async () => {
      const latencies: number[] = [];
      for (let i = 0; i < GETS; i++) {
        const started = performance.now();
        const res = await fetch(`${service.baseUrl}/v1/agents/${agent.agent_id}`, { headers });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`the bystander's GET answered ${res.status}`);
        latencies.push(performance.now() - started);
      }
      return summary(latencies);
    };
    /** The bystander's GETs while ATTACKERS clients send `body` back to back. */
    const attacked = async (body: string) => {
      let attacking = true;
      const attackers = Array.from({ length: ATTACKERS }, async () => {
        while (attacking) await post(body);
      });
      const figures = await gets();
      attacking = false;
      await Promise.all(attackers);
      return figures;
    };
    const idle = await gets();
    const flatAttack = await attacked(BODIES.flat!);
    const deepAttack = await attacked(BODIES.deep!);
    const bystander = {
      idle,
      flat_bodies: flatAttack,
      deep_bodies: deepAttack,
      attackers: ATTACKERS,
      deep_p50_ratio_to_flat: round(deepAttack.p50_ms / flatAttack.p50_ms),
      deep_p99_ratio_to_flat: round(deepAttack.p99_ms / flatAttack.p99_ms),
      deep_p50_ratio_to_idle: round(deepAttack.p50_ms / idle.p50_ms),
    };
    log("bystander", bystander);

    const report = { ...reportHeader("json-bodies"), results: { pglite: { bodies, bystander } } };
    process.stdout.write(`written to ${writeResults("json-bodies.json", report)}\n`);
  } finally {
    await service.stop();
    await cleanup();
  }
}

await main();
