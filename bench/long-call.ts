/**
 * A live turn late in a long call against one early in it: one call, its agent on a relay socket,
 * TURNS turns of about a thousand characters each answered by the agent, with the service in its
 * own process. For each stretch of turns, the p50 of utterance → relay (the softphone's `say` to
 * the call.utterance frame at the relay) and the size of the frame; the last stretch as a ratio
 * to the first. A turn carries a window of the conversation, so a late turn should cost what an
 * early one does. Usage: npm run bench (BENCH_DATABASES, BENCH_LONG_CALL_TURNS). Written to
 * long-call.json in the results folder (harness/results.ts).
 */
import { Api } from "../harness/api.js";
import { writeResults } from "../harness/results.js";
import { FrameLine } from "./frame-line.js";
import { DATABASES, postJson, progressLog, reportHeader, round, type Setup, setUp, summary } from "./support.js";

const TURNS = Number(process.env.BENCH_LONG_CALL_TURNS ?? 300);
const STRETCH = 20;
const text = (turn: number) => `turn ${turn}: ${"and then the caller went on about the order ".repeat(23)}`.slice(0, 1000).trim();

async function longCall({ service, apiKey }: Setup) {
  const api = new Api(service.baseUrl, apiKey);
  const ws = service.baseUrl.replace(/^http/, "ws");
  const agentId = (await api.post("/v1/agents", { name: "long call" }, { unchecked: true })).body.agent_id;
  await api.post("/v1/numbers", { agent_id: agentId }, { unchecked: true });
  const relay = await FrameLine.connect(`${ws}/v1/events/ws?agent_id=${agentId}&runtime=bench`, apiKey);
  const callId = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" }, { unchecked: true })).body.call_id;
  const phone = await FrameLine.connect(`${ws}/v1/sandbox/calls/${callId}/ws`, apiKey);
  const turns: Array<{ ms: number; bytes: number }> = [];
  for (let turn = 0; turn < TURNS; turn++) {
    const utterance = relay.next((f) => f.type === "event" && f.event.event_type === "call.utterance", 30_000, "call.utterance");
    const started = performance.now();
    phone.send({ type: "say", text: text(turn) });
    const frame = await utterance;
    turns.push({ ms: performance.now() - started, bytes: Buffer.byteLength(JSON.stringify(frame)) });
    relay.send({ type: "ack", event_id: frame.event.event_id });
    const speech = phone.next((f) => f.type === "speech" && f.turn_id === frame.event.turn_id, 30_000, "speech");
    const res = await postJson(frame.event.push_context_url, frame.event.push_token, { text: `Noted, item ${turn}. Anything else?` });
    if (res.status !== 200) throw new Error(`push answered ${res.status}: ${res.text}`);
    await speech;
  }
  await api.post(`/v1/calls/${callId}/hangup`, undefined, { unchecked: true });
  phone.close();
  relay.close();
  // The first few turns warm the service up; the window is full well before the last stretch.
  const stretch = (from: number) => {
    const part = turns.slice(from, from + STRETCH);
    return {
      turns: `${from + 1}-${from + part.length}`,
      utterance_to_relay: summary(part.map((t) => t.ms)),
      frame_bytes_max: Math.max(...part.map((t) => t.bytes)),
    };
  };
  const early = stretch(10);
  const late = stretch(TURNS - STRETCH);
  return {
    early,
    late,
    p50_ratio_late_to_early: round(late.utterance_to_relay.p50_ms / early.utterance_to_relay.p50_ms),
    frame_ratio_late_to_early: round(late.frame_bytes_max / early.frame_bytes_max),
  };
}

async function main() {
  const log = progressLog("long-call");
  const results: Record<string, unknown> = {};
  for (const database of DATABASES) {
    const setup = await setUp(database);
    try {
      results[database] = await longCall(setup);
      log(database, results[database]);
    } finally {
      await setup.service.stop();
      await setup.cleanup();
    }
  }
  const file = writeResults("long-call.json", { ...reportHeader("long-call"), turns: TURNS, results });
  process.stdout.write(`written to ${file}\n`);
}

await main();
