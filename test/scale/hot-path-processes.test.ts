import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Api } from "../../harness/api.js";
import { RelayClient } from "../../harness/relay-client.js";
import { onPostgres } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";
import { type TwoProcesses, twoProcesses } from "../support/two-processes.js";

// The hot path's shortcuts (delivery from memory, caches) must not cut other processes out.
describe.runIf(onPostgres)("two processes on one PostgreSQL, with the hot path's shortcuts", () => {
  let processes: TwoProcesses;

  beforeAll(async () => {
    processes = await twoProcesses({ TURN_TIMEOUT_MS: "60000", LOG_LEVEL: "info" });
  }, 120_000);
  afterAll(() => processes?.stop());

  it("under load, delivers every turn to relay sockets on A from callers on B, and speaks every answer pushed to A", { timeout: 60_000 }, async () => {
    const { a, b, account } = processes;
    const apiA = new Api(a.baseUrl, account.apiKey);
    const apiB = new Api(b.baseUrl, account.apiKey);
    const CALLS = 10;
    const TURNS = 8;
    await Promise.all(
      Array.from({ length: CALLS }, async (_, n) => {
        const { agentId } = await agentWithNumber(apiB);
        const relay = await RelayClient.connect(a.baseUrl, { agent_id: agentId }, account.apiKey);
        const callId = await answeredCall(apiB, agentId);
        const phone = await Softphone.connect(b.baseUrl, callId, account.apiKey);
        for (let turn = 0; turn < TURNS; turn++) {
          const text = `call ${n} turn ${turn}`;
          phone.send({ type: "say", text });
          const event = (await relay.waitForEvents(turn + 1, () => true, 10_000)).at(-1)!;
          expect(event).toMatchObject({ event_type: "call.utterance", payload: { text } });
          expect(event.conversation).toHaveLength(2 * turn + 1);
          relay.ack(event.event_id);
          const from = phone.frames.length;
          const pushed = await apiA.post(`/v1/calls/${callId}/context`, { text: `answer ${n}.${turn}` }, { query: { turn_id: event.turn_id } });
          expect(pushed.status).toBe(200);
          expect(await phone.next((f) => f.type === "speech", 10_000, from)).toMatchObject({ text: `answer ${n}.${turn}`, turn_id: event.turn_id });
        }
        expect(relay.events()).toHaveLength(TURNS);
        phone.close();
        await relay.close();
      }),
    );
  });

  it("refuses a key revoked through A on B within one second, though B had it cached", async () => {
    const { a, b, account } = processes;
    const apiA = new Api(a.baseUrl, account.apiKey);
    const minted = await apiA.post("/v1/auth/keys", { name: "short-lived" });
    expect(minted.status).toBe(201);
    const apiB = new Api(b.baseUrl, minted.body.api_key);
    // B checks (and caches) the key.
    expect((await apiB.get("/v1/agents")).status).toBe(200);
    expect((await apiB.get("/v1/agents")).status).toBe(200);
    const revoked = await apiA.delete(`/v1/auth/keys/${minted.body.key_id}`);
    expect(revoked.status).toBe(200);
    const since = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - since < 1_000) {
      status = (await apiB.get("/v1/agents", { unchecked: true })).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(401);
    expect(Date.now() - since).toBeLessThan(1_000);
  });
});
