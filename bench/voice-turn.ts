/**
 * The service's own share of a live turn, and the cost of an API request, measured from outside
 * with the service in its own process (LOG_LEVEL=warn), on PostgreSQL and on PGlite, in one run:
 *
 *   utterance → relay:  the far party finishes a turn (softphone `say`) → the call.utterance frame reaches the agent's relay socket
 *   push → speech:      the agent POSTs context → the speech frame reaches the softphone
 *
 * The four figures of issue 12: one call at speech pace (p50 of each leg); 100 calls at speech
 * pace, a turn every BENCH_PACE_MS each (p99 of each leg); 100 calls taking turns back to back
 * (turns per second); authenticated GET /v1/calls/{id} against a bare express 5 JSON hello
 * (autocannon, 32 connections, one after the other in the same run). Then relay throughput.
 * Usage: npm run bench (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test;
 * BENCH_DATABASES=postgresql,pglite). Written to bench/results/voice-turn.json.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { Api } from "../test/support/api.js";
import { projectRoot } from "../test/support/process.js";
import { RelayClient } from "../test/support/relay-client.js";
import { Softphone } from "../test/support/softphone.js";
import { CALLS, DATABASES, GOALS, PACE_MS, postJson, round, setUp, summary, turnFigures, TURNS_BACK_TO_BACK, TURNS_ONE, TURNS_PACED, type Setup } from "./support.js";

const HTTP_SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 10);
const THROUGHPUT_EVENTS = Number(process.env.BENCH_EVENTS ?? 5000);

/** `calls` live calls, each with its own agent, relay socket and softphone, taking `turns` turns, one every paceMs (0: back to back). */
async function measureTurns({ service, apiKey }: Setup, calls: number, turns: number, paceMs: number) {
  const api = new Api(service.baseUrl, apiKey);
  const lines = await Promise.all(
    Array.from({ length: calls }, async () => {
      const agentId = (await api.post("/v1/agents", { name: "bench" }, { unchecked: true })).body.agent_id;
      await api.post("/v1/numbers", { agent_id: agentId }, { unchecked: true });
      const relay = await RelayClient.connect(service.baseUrl, { agent_id: agentId, runtime: "bench" }, apiKey);
      const callId = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" }, { unchecked: true })).body.call_id;
      const phone = await Softphone.connect(service.baseUrl, callId, apiKey);
      await phone.next((f) => f.type === "status");
      return { relay, callId, phone };
    }),
  );
  const toRelay: number[] = [];
  const toSpeech: number[] = [];
  const started = performance.now();
  await Promise.all(
    lines.map(async ({ relay, phone }) => {
      // Paced calls start spread over one pace interval, as real callers would.
      if (paceMs > 0) await new Promise((r) => setTimeout(r, Math.random() * paceMs));
      for (let turn = 0; turn < turns; turn++) {
        const turnStarted = performance.now();
        const seen = relay.events().length;
        const t0 = performance.now();
        phone.send({ type: "say", text: `turn ${turn}` });
        const [event] = (await relay.waitForEvents(seen + 1, () => true, 30_000)).slice(seen);
        toRelay.push(performance.now() - t0);
        relay.ack(event!.event_id);
        const from = phone.frames.length;
        const t1 = performance.now();
        const answer = postJson(event!.push_context_url, event!.push_token, { text: `answer ${turn}` });
        const speech = phone.next((f) => f.type === "speech", 30_000, from);
        const res = await answer;
        if (res.status !== 200) throw new Error(`push answered ${res.status}: ${res.text}`);
        await speech;
        toSpeech.push(performance.now() - t1);
        if (paceMs > 0) await new Promise((r) => setTimeout(r, Math.max(0, turnStarted + paceMs - performance.now())));
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(
    lines.map(async ({ relay, phone, callId }) => {
      await api.post(`/v1/calls/${callId}/hangup`, undefined, { unchecked: true });
      phone.close();
      await relay.close();
    }),
  );
  return {
    concurrent_calls: calls,
    pace_ms: paceMs,
    turns: calls * turns,
    utterance_to_relay: summary(toRelay),
    push_to_speech: summary(toSpeech),
    turns_per_second: Math.round((calls * turns) / seconds),
    call_id: lines[0]!.callId,
  };
}

async function requestsPerSecond(url: string, headers: Record<string, string> = {}) {
  const result = await autocannon({ url, connections: 32, duration: HTTP_SECONDS, headers });
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return Math.round(result.requests.average);
}

/** A backlog of texts drained by one relay socket acking in batches. */
async function relayThroughput({ service, apiKey }: Setup) {
  const api = new Api(service.baseUrl, apiKey);
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
  await relay.close();
  return { events: THROUGHPUT_EVENTS, seconds: round(seconds), events_per_second: Math.round(THROUGHPUT_EVENTS / seconds) };
}

async function runOn(database: string, helloUrl: string) {
  const setup = await setUp(database);
  try {
    const log = (key: string, value: unknown) => process.stdout.write(`${database} ${key}: ${JSON.stringify(value)}\n`);
    const one = await measureTurns(setup, 1, TURNS_ONE, PACE_MS);
    log("one call at speech pace", one);
    const paced = await measureTurns(setup, CALLS, TURNS_PACED, PACE_MS);
    log(`${CALLS} calls at speech pace`, paced);
    const backToBack = await measureTurns(setup, CALLS, TURNS_BACK_TO_BACK, 0);
    log(`${CALLS} calls back to back`, backToBack);
    // The two HTTP figures side by side: the service's GET, then the bare hello, same settings.
    const getCall = await requestsPerSecond(`${setup.service.baseUrl}/v1/calls/${one.call_id}`, { authorization: `Bearer ${setup.apiKey}` });
    const hello = await requestsPerSecond(helloUrl);
    log("GET /v1/calls/{id} vs bare hello", { getCall, hello });
    const throughput = await relayThroughput(setup);
    log("relay throughput", throughput);
    return {
      figures: {
        ...turnFigures(["utterance_to_relay", "push_to_speech"], { one_call: one, paced, back_to_back: backToBack }),
        get_call_vs_bare_hello: {
          get_call_requests_per_second: getCall,
          bare_hello_requests_per_second: hello,
          share: round(getCall / hello),
          goal: GOALS.get_call_share_of_hello,
        },
      },
      runs: { one_call: one, paced, back_to_back: backToBack },
      relay_throughput: throughput,
    };
  } finally {
    await setup.service.stop();
    await setup.cleanup();
  }
}

/** The bare express hello, in its own process. */
async function startHello() {
  const child = spawn(process.execPath, ["--import", "tsx", join(projectRoot, "bench", "bare-hello.ts")], { cwd: projectRoot, stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once("data", (data) => resolve(JSON.parse(String(data)).port));
    child.once("exit", (code) => reject(new Error(`bare hello exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}/hello`, stop: () => child.kill("SIGTERM") };
}

async function main() {
  const hello = await startHello();
  const results: Record<string, unknown> = {};
  try {
    for (const database of DATABASES) results[database] = await runOn(database, hello.url);
  } finally {
    hello.stop();
  }
  const report = {
    benchmark: "voice-turn",
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
    settings: { pace_ms: PACE_MS, turns_one_call: TURNS_ONE, turns_paced: TURNS_PACED, turns_back_to_back: TURNS_BACK_TO_BACK, calls: CALLS, http_seconds: HTTP_SECONDS, connections: 32 },
    results,
  };
  mkdirSync(join(projectRoot, "bench", "results"), { recursive: true });
  const file = process.env.BENCH_OUTPUT ?? join(projectRoot, "bench", "results", "voice-turn.json");
  writeFileSync(file, JSON.stringify(report, null, 2) + "\n");
  process.stdout.write(`written to ${file}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
