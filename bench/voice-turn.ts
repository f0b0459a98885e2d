/**
 * The service's own share of a live turn, and the cost of an API request, measured from outside
 * with the service in its own process (LOG_LEVEL=warn), on PostgreSQL and on PGlite, in one run:
 *
 *   utterance → relay:  the far party finishes a turn (softphone `say`) → the call.utterance frame reaches the agent's relay socket
 *   push → speech:      the agent POSTs context → the speech frame reaches the softphone
 *
 * The four figures of the live turn: one call at speech pace (p50 of each leg); 100 calls at speech
 * pace, a turn every BENCH_PACE_MS each (p99 of each leg); 100 calls taking turns back to back
 * (turns per second); authenticated GET /v1/calls/{id} against a bare express 5 JSON hello
 * (autocannon, 32 connections, one after the other in the same run). Then relay throughput.
 * Usage: npm run bench (BENCH_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test;
 * BENCH_DATABASES=postgresql,pglite). Written to voice-turn.json in the results folder
 * (harness/results.ts), or to BENCH_OUTPUT.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { Api } from "../harness/api.js";
import { projectRoot } from "../harness/process.js";
import { RelayClient } from "../harness/relay-client.js";
import { writeResults } from "../harness/results.js";
import { FrameLine } from "./frame-line.js";
import {
  type CpuSeconds,
  cpuUsed,
  DATABASES,
  GOALS,
  measuredRequests,
  openConnections,
  postJson,
  progressLog,
  reportHeader,
  requestsPerSecond,
  round,
  type Setup,
  setUp,
  summary,
  turnFigures,
  turnRuns,
} from "./support.js";

const THROUGHPUT_EVENTS = Number(process.env.BENCH_EVENTS ?? 5000);

/** `calls` live calls, each with its own agent, relay socket and softphone, taking `turns` turns, one every paceMs (0: back to back). */
async function measureTurns({ service, apiKey, cpuSeconds }: Setup, calls: number, turns: number, paceMs: number) {
  const api = new Api(service.baseUrl, apiKey);
  const ws = service.baseUrl.replace(/^http/, "ws");
  const lines = await Promise.all(
    Array.from({ length: calls }, async () => {
      const agentId = (await api.post("/v1/agents", { name: "bench" }, { unchecked: true })).body.agent_id;
      await api.post("/v1/numbers", { agent_id: agentId }, { unchecked: true });
      const relay = await FrameLine.connect(`${ws}/v1/events/ws?agent_id=${agentId}&runtime=bench`, apiKey);
      const callId = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" }, { unchecked: true })).body.call_id;
      const phone = await FrameLine.connect(`${ws}/v1/sandbox/calls/${callId}/ws`, apiKey);
      return { relay, callId, phone };
    }),
  );
  await openConnections(`${service.baseUrl}/health`, calls);
  const before = await legTotals(service.baseUrl);
  const cpuBefore = await cpuSeconds();
  const toRelay: number[] = [];
  const toSpeech: number[] = [];
  const started = performance.now();
  await Promise.all(
    lines.map(async ({ relay, phone }) => {
      // Paced calls start spread over one pace interval, as real callers would.
      if (paceMs > 0) await new Promise((r) => setTimeout(r, Math.random() * paceMs));
      for (let turn = 0; turn < turns; turn++) {
        const turnStarted = performance.now();
        const utterance = relay.next((f) => f.type === "event" && f.event.event_type === "call.utterance", 30_000, "call.utterance");
        const t0 = performance.now();
        phone.send({ type: "say", text: `turn ${turn}` });
        const { event } = await utterance;
        toRelay.push(performance.now() - t0);
        relay.send({ type: "ack", event_id: event.event_id });
        const speech = phone.next((f) => f.type === "speech" && f.turn_id === event.turn_id, 30_000, "speech");
        const t1 = performance.now();
        const res = await postJson(event.push_context_url, event.push_token, { text: `answer ${turn}` });
        if (res.status !== 200) throw new Error(`push answered ${res.status}: ${res.text}`);
        await speech;
        toSpeech.push(performance.now() - t1);
        if (paceMs > 0) await new Promise((r) => setTimeout(r, Math.max(0, turnStarted + paceMs - performance.now())));
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const after = await legTotals(service.baseUrl);
  const cpuAfter = await cpuSeconds();
  const perTurnMs = (cpu: number) => round((cpu * 1000) / (calls * turns));
  await Promise.all(
    lines.map(async ({ relay, phone, callId }) => {
      await api.post(`/v1/calls/${callId}/hangup`, undefined, { unchecked: true });
      phone.close();
      relay.close();
    }),
  );
  return {
    concurrent_calls: calls,
    pace_ms: paceMs,
    turns: calls * turns,
    utterance_to_relay: summary(toRelay),
    push_to_speech: summary(toSpeech),
    // The same legs as the service timed them itself (agentline_turn_leg_seconds): from the
    // utterance's or the push's arrival to the frame's hand-off, its database round trip included.
    service_leg_mean_ms: {
      utterance_to_relay: round(((after.utterance.sum - before.utterance.sum) / (after.utterance.count - before.utterance.count)) * 1000),
      push_to_speech: round(((after.push.sum - before.push.sum) / (after.push.count - before.push.count)) * 1000),
    },
    // CPU time per turn, the service's process and the database's: unlike the latencies, it
    // hardly moves when other work shares the machine (that work delays a turn, it does not
    // make it cost more), so it is the figure to compare on a busy machine. Back to back on
    // PGlite (one core, saturated) it swings between runs of one build (4.3 and 6.4 ms seen);
    // the paced run is never saturated, but its figure also holds the service's idle work
    // (timers, socket pings) spread over its turns.
    cpu_ms_per_turn: cpuUsed(cpuBefore, cpuAfter, perTurnMs),
    turns_per_second: Math.round((calls * turns) / seconds),
    call_id: lines[0]!.callId,
  };
}

/** The service's own running totals of each turn leg, from its /metrics (a loopback client needs no token). */
async function legTotals(baseUrl: string) {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const read = (leg: string, what: "sum" | "count") =>
    Number(new RegExp(`^agentline_turn_leg_seconds_${what}\\{leg="${leg}"\\} (\\S+)$`, "m").exec(text)?.[1] ?? 0);
  return {
    utterance: { sum: read("utterance", "sum"), count: read("utterance", "count") },
    push: { sum: read("push", "sum"), count: read("push", "count") },
  };
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
    const log = progressLog(database);
    const runs = await turnRuns(log, (calls, turns, paceMs) => measureTurns(setup, calls, turns, paceMs));
    // The two HTTP figures side by side: the service's GET, then the bare hello, same settings.
    // CPU per GET (service and database, over the measured part only): like CPU per turn, it holds
    // still when other work shares the machine, where requests per second do not.
    const counters: CpuSeconds[] = [];
    const readCounters = async () => void counters.push(await setup.cpuSeconds());
    const get = await measuredRequests(`${setup.service.baseUrl}/v1/calls/${runs.one_call.call_id}`, { authorization: `Bearer ${setup.apiKey}` }, readCounters);
    const getCpu = cpuUsed(counters[0]!, counters[1]!, (cpu) => round((cpu * 1e6) / get.total));
    const getCall = get.perSecond;
    const hello = await requestsPerSecond(helloUrl);
    log("GET /v1/calls/{id} vs bare hello", { getCall, hello, cpu_us_per_get: getCpu });
    const throughput = await relayThroughput(setup);
    log("relay throughput", throughput);
    return {
      figures: {
        ...turnFigures(["utterance_to_relay", "push_to_speech"], runs),
        get_call_vs_bare_hello: {
          get_call_requests_per_second: getCall,
          bare_hello_requests_per_second: hello,
          share: round(getCall / hello),
          cpu_us_per_get: getCpu,
          goal: GOALS.get_call_share_of_hello,
        },
      },
      runs,
      relay_throughput: throughput,
    };
  } finally {
    await setup.service.stop();
    await setup.cleanup();
  }
}

/** The bare express hello, in its own process. */
async function startHello() {
  const child = spawn(process.execPath, ["--import", "tsx", join(projectRoot, "bench", "bare-hello.ts")], {
    cwd: projectRoot,
    stdio: ["ignore", "pipe", "inherit"],
  });
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
  const report = { ...reportHeader("voice-turn"), results };
  const file = writeResults("voice-turn.json", report, process.env.BENCH_OUTPUT);
  process.stdout.write(`written to ${file}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
