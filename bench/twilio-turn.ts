/**
 * The service's own share of a voice turn through the Twilio carrier, with the service in its
 * own process (CARRIER=twilio) and the Twilio stand-in in this one playing ConversationRelay,
 * on PostgreSQL and on PGlite:
 *
 *   prompt → relay:  ConversationRelay sends `prompt` (last: true) → the call.utterance frame reaches the agent's relay socket
 *   push → token:    the agent POSTs context → the `text` token (last: true) reaches ConversationRelay
 *
 * The same runs and table as the sandbox rows of bench/voice-turn.ts (bench/support.ts): one call
 * at speech pace (p50 of each leg), 100 calls at speech pace (p99), 100 calls back to back
 * (turns per second). Usage: npm run bench. Written to twilio-turn.json in the results folder
 * (harness/results.ts), or to BENCH_TWILIO_OUTPUT.
 */
import { Api } from "../harness/api.js";
import { RelayClient } from "../harness/relay-client.js";
import { writeResults } from "../harness/results.js";
import { TwilioStandIn } from "../harness/twilio/stand-in.js";
import { CALLS, DATABASES, openConnections, postJson, progressLog, reportHeader, setUp, summary, turnFigures, turnRuns } from "./support.js";

type Agent = { agentId: string; relay: RelayClient; acked: number };

/** `agents.length` live Twilio calls taking `turns` turns each, one every paceMs (0: back to back). */
async function measureTurns(api: Api, twilio: TwilioStandIn, agents: Agent[], turns: number, paceMs: number) {
  // A live call per agent, whose ConversationRelay socket the stand-in holds.
  const lines = await Promise.all(
    agents.map(async (agent) => {
      const callId = (await api.post("/v1/calls", { agent_id: agent.agentId, to_number: "+14155550142" }, { unchecked: true })).body.call_id;
      const callSid = [...twilio.calls.values()].find((c) => c.twiml?.includes(callId))!.sid;
      await twilio.ring(callSid);
      return { agent, callSid, leg: await twilio.answer(callSid) };
    }),
  );
  await openConnections(`${api.baseUrl}/health`, agents.length);
  const toRelay: number[] = [];
  const toToken: number[] = [];
  const started = performance.now();
  await Promise.all(
    lines.map(async ({ agent, leg }) => {
      // Paced calls start spread over one pace interval, as real callers would.
      if (paceMs > 0) await new Promise((r) => setTimeout(r, Math.random() * paceMs));
      for (let turn = 0; turn < turns; turn++) {
        const turnStarted = performance.now();
        // The agents' sockets are reused run after run: earlier calls' ends arrive too.
        const isTurn = (e: { event_type?: string }) => e.event_type === "call.utterance";
        const seen = agent.relay.events().filter(isTurn).length;
        const t0 = performance.now();
        leg.say(`turn ${turn}`);
        const [event] = (await agent.relay.waitForEvents(seen + 1, isTurn, 30_000)).slice(seen);
        toRelay.push(performance.now() - t0);
        // Each event is acknowledged once.
        const fresh = agent.relay.events().slice(agent.acked);
        agent.acked += fresh.length;
        agent.relay.ack(...fresh.map((e) => e.event_id as string));
        const t1 = performance.now();
        const res = await postJson(event!.push_context_url, event!.push_token, { text: `answer ${turn}` });
        if (res.status !== 200) throw new Error(`push answered ${res.status}: ${res.text}`);
        await leg.line(turn, 30_000);
        toToken.push(performance.now() - t1);
        if (paceMs > 0) await new Promise((r) => setTimeout(r, Math.max(0, turnStarted + paceMs - performance.now())));
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await Promise.all(lines.map(({ callSid }) => twilio.hangUp(callSid)));
  return {
    concurrent_calls: agents.length,
    pace_ms: paceMs,
    turns: agents.length * turns,
    prompt_to_relay: summary(toRelay),
    push_to_text_token: summary(toToken),
    turns_per_second: Math.round((agents.length * turns) / seconds),
  };
}

async function runOn(database: string) {
  const twilio = await TwilioStandIn.start();
  const setup = await setUp(database, (port) => twilio.env(`http://127.0.0.1:${port}`));
  try {
    const api = new Api(setup.service.baseUrl, setup.apiKey);
    // One agent per concurrent call, each with a Twilio number and a relay socket, reused by every
    // run (the stand-in offers 100 fictional numbers per area code).
    const agents: Agent[] = await Promise.all(
      Array.from({ length: CALLS }, async (_, i) => {
        const agentId = (await api.post("/v1/agents", { name: "bench" }, { unchecked: true })).body.agent_id as string;
        const bought = await api.post("/v1/numbers", { agent_id: agentId, area_code: ["415", "212", "312", "206"][i % 4] }, { unchecked: true });
        if (bought.status !== 201) throw new Error(`buying a number answered ${bought.status}: ${bought.text}`);
        return { agentId, relay: await RelayClient.connect(setup.service.baseUrl, { agent_id: agentId, runtime: "bench" }, setup.apiKey), acked: 0 };
      }),
    );
    const runs = await turnRuns(progressLog(`twilio ${database}`), (calls, turns, paceMs) => measureTurns(api, twilio, agents.slice(0, calls), turns, paceMs));
    await Promise.all(agents.map(({ relay }) => relay.close()));
    twilio.expectValid();
    return {
      figures: turnFigures(["prompt_to_relay", "push_to_text_token"], runs),
      runs,
    };
  } finally {
    await setup.service.stop();
    await setup.cleanup();
    await twilio.close();
  }
}

async function main() {
  const results: Record<string, unknown> = {};
  for (const database of DATABASES) results[database] = await runOn(database);
  const report = { ...reportHeader("twilio-turn"), carrier: "twilio (loopback stand-in)", results };
  const file = writeResults("twilio-turn.json", report, process.env.BENCH_TWILIO_OUTPUT);
  process.stdout.write(`written to ${file}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
