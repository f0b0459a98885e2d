/**
 * The service's own share of a voice turn, through the sandbox softphone and the relay, on
 * PostgreSQL, with the service in its own process:
 *
 *   utterance → relay:  the far party finishes a turn → the call.utterance frame reaches the agent's relay socket
 *   push → speech:      the agent POSTs context → the speech frame reaches the far party
 *
 * p50/p99 at 1, 10 and 100 concurrent calls, each call taking its turns back to back (the
 * ceiling: far denser than speech); then 100 calls paced like speech, a turn every 3 s each;
 * then relay throughput in events per second.
 * Usage: npm run bench (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { openDatabase } from "../core/db/database.js";
import { createLogger } from "../core/logger.js";
import { createAccount } from "../test/support/accounts.js";
import { Api } from "../test/support/api.js";
import { spawnService, projectRoot } from "../test/support/process.js";
import { RelayClient } from "../test/support/relay-client.js";
import { Softphone } from "../test/support/softphone.js";

const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const TURNS_PER_CALL = Number(process.env.BENCH_TURNS ?? 20);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? "1,10,100").split(",").map(Number);
const THROUGHPUT_EVENTS = Number(process.env.BENCH_EVENTS ?? 5000);
const PACED = { calls: Number(process.env.BENCH_PACED_CALLS ?? 100), paceMs: Number(process.env.BENCH_PACE_MS ?? 3000) };

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
function summary(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 100) / 100;
  return { samples: s.length, p50_ms: round(percentile(s, 50)), p99_ms: round(percentile(s, 99)), max_ms: round(s.at(-1)!) };
}

async function main() {
  const dbName = `agentline_bench_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = "/" + dbName;
  const databaseUrl = url.toString();
  // BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the service process.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const service = await spawnService(
    { DATABASE_URL: databaseUrl, LOG_LEVEL: "info", TURN_TIMEOUT_MS: "60000", RELAY_WINDOW: "1000" },
    ["node", ...nodeArgs, "dist/bin/agentline.js", "serve"],
  );
  try {
    const handle = await openDatabase({ url: databaseUrl, dataDir: "unused", logger: createLogger("silent") });
    const { apiKey } = await createAccount(handle, "bench@example.com", { creditMicros: 10_000_000_000 });
    const api = new Api(service.baseUrl, apiKey);
    const results: Record<string, unknown> = {};

    const runs = [...CONCURRENCY.map((calls) => ({ calls, paceMs: 0 })), ...(PACED.calls > 0 ? [PACED] : [])];
    for (const { calls, paceMs } of runs) {
      // One agent per call, each with a number, a relay socket and a live call with its softphone.
      const lines = await Promise.all(
        Array.from({ length: calls }, async () => {
          const agentId = (await api.post("/v1/agents", { name: "bench" }, { unchecked: true })).body.agent_id;
          await api.post("/v1/numbers", { agent_id: agentId }, { unchecked: true });
          const relay = await RelayClient.connect(service.baseUrl, { agent_id: agentId, runtime: "bench" }, apiKey);
          const callId = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" }, { unchecked: true })).body.call_id;
          const phone = await Softphone.connect(service.baseUrl, callId, apiKey);
          await phone.next((f) => f.type === "status");
          return { agentId, relay, callId, phone };
        }),
      );
      const toRelay: number[] = [];
      const toSpeech: number[] = [];
      const started = performance.now();
      await Promise.all(
        lines.map(async ({ relay, callId, phone }) => {
          // Paced calls start spread over one pace interval, as real callers would.
          if (paceMs > 0) await new Promise((r) => setTimeout(r, Math.random() * paceMs));
          for (let turn = 0; turn < TURNS_PER_CALL; turn++) {
            const turnStarted = performance.now();
            const text = `turn ${turn}`;
            const seen = relay.events().length;
            const t0 = performance.now();
            phone.send({ type: "say", text });
            const [event] = (await relay.waitForEvents(seen + 1, () => true, 30_000)).slice(seen);
            toRelay.push(performance.now() - t0);
            relay.ack(event!.event_id);
            const from = phone.frames.length;
            const t1 = performance.now();
            const res = await fetch(event!.push_context_url, {
              method: "POST",
              headers: { authorization: `Bearer ${event!.push_token}`, "content-type": "application/json" },
              body: JSON.stringify({ text: `answer ${turn}` }),
            });
            if (res.status !== 200) throw new Error(`push answered ${res.status}: ${await res.text()}`);
            await phone.next((f) => f.type === "speech", 30_000, from);
            toSpeech.push(performance.now() - t1);
            if (paceMs > 0) await new Promise((r) => setTimeout(r, Math.max(0, turnStarted + paceMs - performance.now())));
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      const key = paceMs > 0 ? `calls_${calls}_paced_${paceMs}ms` : `calls_${calls}`;
      results[key] = {
        concurrent_calls: calls,
        pace_ms: paceMs,
        turns: calls * TURNS_PER_CALL,
        utterance_to_relay: summary(toRelay),
        push_to_speech: summary(toSpeech),
        turns_per_second: Math.round((calls * TURNS_PER_CALL) / seconds),
      };
      process.stdout.write(`${key}: ${JSON.stringify(results[key])}\n`);
      await Promise.all(lines.map(async ({ relay, phone, callId }) => {
        await api.post(`/v1/calls/${callId}/hangup`, undefined, { unchecked: true });
        phone.close();
        await relay.close();
      }));
    }

    // Relay throughput: a backlog of texts drained by one relay socket acking in batches.
    const agentId = (await api.post("/v1/agents", { name: "throughput" }, { unchecked: true })).body.agent_id;
    const phoneNumber = (await api.post("/v1/numbers", { agent_id: agentId }, { unchecked: true })).body.phone_number;
    await Promise.all(
      Array.from({ length: 8 }, async (_, worker) => {
        for (let i = worker; i < THROUGHPUT_EVENTS; i += 8) {
          await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550170", text: `m${i}` }, { unchecked: true });
        }
      }),
    );
    const t0 = performance.now();
    const relay = await RelayClient.connect(service.baseUrl, { agent_id: agentId, runtime: "bench" }, apiKey);
    let acked = 0;
    while (acked < THROUGHPUT_EVENTS) {
      const events = await relay.waitForEvents(acked + 1, () => true, 60_000);
      const batch = events.slice(acked).map((e) => e.event_id);
      relay.ack(...batch);
      acked += batch.length;
    }
    const seconds = (performance.now() - t0) / 1000;
    results.relay_throughput = { events: THROUGHPUT_EVENTS, seconds: Math.round(seconds * 100) / 100, events_per_second: Math.round(THROUGHPUT_EVENTS / seconds) };
    process.stdout.write(`relay throughput: ${JSON.stringify(results.relay_throughput)}\n`);
    await relay.close();
    await handle.close();

    const report = {
      benchmark: "voice-turn",
      date: new Date().toISOString(),
      database: "postgresql",
      machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
      turns_per_call: TURNS_PER_CALL,
      results,
    };
    mkdirSync(join(projectRoot, "bench", "results"), { recursive: true });
    writeFileSync(join(projectRoot, "bench", "results", "voice-turn.json"), JSON.stringify(report, null, 2) + "\n");
    process.stdout.write(`written to bench/results/voice-turn.json\n`);
    if (process.env.BENCH_DEBUG_OUTPUT) process.stdout.write(service.output().slice(-3000) + `\n(service wrote ${service.output().length} characters)\n`);
  } finally {
    await service.stop();
    await admin.unsafe(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
