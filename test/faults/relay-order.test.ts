import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Api } from "../../harness/api.js";
import { RelayClient } from "../../harness/relay-client.js";
import { onPostgres } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";
import { type TwoProcesses, twoProcesses } from "../support/two-processes.js";
import { ledgerMismatches, recordFigure } from "./figures.js";

// Two processes writing one agent's events at once. Each commits whenever its
// transaction ends, so without care a later event (by seq) can commit before an earlier one and
// reach the relay first. The relay must hand them over in sequence order.
describe.runIf(onPostgres)("one agent's events written by two processes at once", () => {
  let processes: TwoProcesses;

  beforeAll(async () => {
    processes = await twoProcesses({ TURN_TIMEOUT_MS: "60000", RELAY_ACK_TIMEOUT_MS: "60000", RELAY_WINDOW: "1000", LOG_LEVEL: "info" });
  }, 120_000);
  afterAll(() => processes?.stop());

  it("reach the relay client in strict sequence order", { timeout: 90_000 }, async () => {
    const { a, b, account } = processes;
    const apiA = new Api(a.baseUrl, account.apiKey);
    const apiB = new Api(b.baseUrl, account.apiKey);
    const { agentId, phoneNumber } = await agentWithNumber(apiA);
    const relay = await RelayClient.connect(a.baseUrl, { agent_id: agentId }, account.apiKey);
    // Live turns on two calls (one softphone on each process) and texts through both processes, all at once.
    const calls = await Promise.all(
      [apiA, apiB].map(async (api, n) => {
        const callId = await answeredCall(api, agentId);
        return Softphone.connect([a, b][n]!.baseUrl, callId, account.apiKey);
      }),
    );
    const TEXTS = 120;
    const TURNS = 40;
    const writers = [
      ...[apiA, apiB].flatMap((api, n) =>
        Array.from({ length: 4 }, async (_, worker) => {
          for (let i = worker; i < TEXTS / 2; i += 4) {
            const sent = await api.post(
              "/v1/sandbox/inbound/sms",
              { to_number: phoneNumber, from_number: "+14155550160", text: `p${n} m${i}` },
              { unchecked: true },
            );
            expect(sent.status).toBe(201);
          }
        }),
      ),
      ...calls.map(async (phone, n) => {
        for (let turn = 0; turn < TURNS; turn++) await phone.say(`p${n} turn ${turn}`);
      }),
    ];
    // Acknowledge as they come, as a runtime would (acks race the writes too).
    let acked = 0;
    const acking = (async () => {
      while (acked < TEXTS + 2 * TURNS) {
        const events = await relay.waitForEvents(acked + 1, () => true, 30_000);
        relay.ack(...events.slice(acked).map((e) => e.event_id));
        acked = events.length;
      }
    })();
    await Promise.all(writers);
    await acking;

    const received = relay.events().map((e) => e.event_id as string);
    const sql = postgres(processes.url, { max: 1, onnotice: () => {} });
    try {
      const rows = await sql<
        { event_id: string }[]
      >`select event_id from events where agent_id = ${agentId} and event_type in ('sms.received', 'call.utterance') order by seq`;
      const inSeqOrder = rows.map((r) => r.event_id);
      expect(inSeqOrder).toHaveLength(TEXTS + 2 * TURNS);
      // How many were handed over after an event later in sequence (the probe: 2 of 432).
      const rank = new Map(inSeqOrder.map((id, i) => [id, i]));
      const outOfOrder = received.filter((id, i) => i > 0 && (rank.get(id) ?? -1) < (rank.get(received[i - 1]!) ?? -1)).length;
      recordFigure("relay_order.events_out_of_order", `${outOfOrder} of ${received.length}`, `0 of ${TEXTS + 2 * TURNS}`);
      // Every event exactly once (no ack timed out), in the order of seq.
      expect(received).toEqual(inSeqOrder);
      // Two processes billing the same account at once: the balance is still its ledger's sum.
      expect(await ledgerMismatches(sql)).toEqual([]);
    } finally {
      await sql.end();
      calls.forEach((phone) => phone.close());
      await relay.close();
    }
  });
});
