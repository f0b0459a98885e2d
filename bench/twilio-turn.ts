/**
 * The service's own share of a voice turn through the Twilio carrier, on PostgreSQL, with the
 * service in its own process (CARRIER=twilio) and the Twilio stand-in in this one playing
 * ConversationRelay:
 *
 *   prompt → relay:  ConversationRelay sends `prompt` (last: true) → the call.utterance frame reaches the agent's relay socket
 *   push → token:    the agent POSTs context → the `text` token (last: true) reaches ConversationRelay
 *
 * The same table as the sandbox rows of bench/voice-turn.ts: p50/p99 at 1, 10 and 100 concurrent
 * calls taking turns back to back, then 100 calls paced like speech (a turn every 3 s each).
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
import { projectRoot, spawnService } from "../test/support/process.js";
import { RelayClient } from "../test/support/relay-client.js";
import { freePort, TwilioStandIn } from "../test/support/twilio/stand-in.js";

const adminUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const TURNS_PER_CALL = Number(process.env.BENCH_TURNS ?? 20);
const CONCURRENCY = (process.env.BENCH_CONCURRENCY ?? "1,10,100").split(",").map(Number);
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
  const dbName = `agentline_bench_twilio_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = "/" + dbName;
  const databaseUrl = url.toString();
  const twilio = await TwilioStandIn.start();
  const port = await freePort();
  const service = await spawnService(
    { DATABASE_URL: databaseUrl, LOG_LEVEL: "info", TURN_TIMEOUT_MS: "60000", RELAY_WINDOW: "1000", ...twilio.env(`http://127.0.0.1:${port}`), PORT: String(port) },
    ["node", "dist/bin/agentline.js", "serve"],
  );
  try {
    const handle = await openDatabase({ url: databaseUrl, dataDir: "unused", logger: createLogger("silent") });
    const { apiKey } = await createAccount(handle, "bench@example.com", { creditMicros: 10_000_000_000 });
    await handle.close();
    const api = new Api(service.baseUrl, apiKey);
    const results: Record<string, unknown> = {};

    const runs = [...CONCURRENCY.map((calls) => ({ calls, paceMs: 0 })), ...(PACED.calls > 0 ? [PACED] : [])];
    // One agent per concurrent call, each with a Twilio number and a relay socket, reused by every
    // run (the stand-in offers 100 fictional numbers per area code).
    const agents = await Promise.all(
      Array.from({ length: Math.max(...runs.map((r) => r.calls)) }, async (_, i) => {
        const agentId = (await api.post("/v1/agents", { name: "bench" }, { unchecked: true })).body.agent_id as string;
        const areaCode = ["415", "212", "312", "206"][i % 4];
        const bought = await api.post("/v1/numbers", { agent_id: agentId, area_code: areaCode }, { unchecked: true });
        if (bought.status !== 201) throw new Error(`buying a number answered ${bought.status}: ${bought.text}`);
        return { agentId, relay: await RelayClient.connect(service.baseUrl, { agent_id: agentId, runtime: "bench" }, apiKey) };
      }),
    );
    // How many of each socket's events have been acknowledged (each is acknowledged once).
    const acked = new Map(agents.map(({ relay }) => [relay, 0]));
    for (const { calls, paceMs } of runs) {
      // A live call per agent, whose ConversationRelay socket the stand-in holds.
      const lines = await Promise.all(
        agents.slice(0, calls).map(async ({ agentId, relay }) => {
          const callId = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" }, { unchecked: true })).body.call_id;
          const callSid = [...twilio.calls.values()].find((c) => c.twiml?.includes(callId))!.sid;
          await twilio.ring(callSid);
          const leg = await twilio.answer(callSid);
          return { relay, callId, callSid, leg };
        }),
      );
      const toRelay: number[] = [];
      const toToken: number[] = [];
      const started = performance.now();
      await Promise.all(
        lines.map(async ({ relay, leg }) => {
          if (paceMs > 0) await new Promise((r) => setTimeout(r, Math.random() * paceMs));
          for (let turn = 0; turn < TURNS_PER_CALL; turn++) {
            const turnStarted = performance.now();
            // The agents' sockets are reused run after run: earlier calls' ends arrive too.
            const isTurn = (e: { event_type?: string }) => e.event_type === "call.utterance";
            const seen = relay.events().filter(isTurn).length;
            const t0 = performance.now();
            leg.say(`turn ${turn}`);
            const [event] = (await relay.waitForEvents(seen + 1, isTurn, 30_000)).slice(seen);
            toRelay.push(performance.now() - t0);
            const fresh = relay.events().slice(acked.get(relay) ?? 0);
            acked.set(relay, acked.get(relay)! + fresh.length);
            relay.ack(...fresh.map((e) => e.event_id as string));
            const t1 = performance.now();
            const res = await fetch(event!.push_context_url, {
              method: "POST",
              headers: { authorization: `Bearer ${event!.push_token}`, "content-type": "application/json" },
              body: JSON.stringify({ text: `answer ${turn}` }),
            });
            if (res.status !== 200) throw new Error(`push answered ${res.status}: ${await res.text()}`);
            await leg.line(turn, 30_000);
            toToken.push(performance.now() - t1);
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
        prompt_to_relay: summary(toRelay),
        push_to_text_token: summary(toToken),
        turns_per_second: Math.round((calls * TURNS_PER_CALL) / seconds),
      };
      process.stdout.write(`${key}: ${JSON.stringify(results[key])}\n`);
      await Promise.all(lines.map(({ callSid }) => twilio.hangUp(callSid)));
    }
    await Promise.all(agents.map(({ relay }) => relay.close()));
    twilio.expectValid();

    const report = {
      benchmark: "twilio-turn",
      date: new Date().toISOString(),
      database: "postgresql",
      carrier: "twilio (loopback stand-in)",
      machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
      turns_per_call: TURNS_PER_CALL,
      results,
    };
    mkdirSync(join(projectRoot, "bench", "results"), { recursive: true });
    writeFileSync(join(projectRoot, "bench", "results", "twilio-turn.json"), JSON.stringify(report, null, 2) + "\n");
    process.stdout.write(`written to bench/results/twilio-turn.json\n`);
  } finally {
    await service.stop();
    await twilio.close();
    await admin.unsafe(`drop database if exists ${dbName} with (force)`);
    await admin.end();
  }
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
