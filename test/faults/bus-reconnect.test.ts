import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Api } from "../../harness/api.js";
import { type ServiceProcess, spawnService } from "../../harness/process.js";
import { RelayClient } from "../../harness/relay-client.js";
import { onPostgres } from "../support/service.js";
import { startTcpProxy } from "../support/tcp-proxy.js";
import { agentWithNumber } from "../support/telephony.js";
import { faultDatabase, postgresPort, recordFigure, serve, sleep } from "./figures.js";

// A reconnect scans for what it missed. Process A holds the
// agent's relay socket and reaches PostgreSQL through a proxy; process B reaches it directly.
// While A is cut off, B commits texts for the agent: their NOTIFYs are lost to A (a NOTIFY is
// not kept for a listener that is away). When A's LISTEN is back, it must scan for them at once,
// not wait for the relay heartbeat or for the next notification (none comes in this test).
describe.runIf(onPostgres)("a process cut off from the database while another writes its agent's events", () => {
  let db: Awaited<ReturnType<typeof faultDatabase>>;
  let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
  let a: ServiceProcess;
  let b: ServiceProcess;

  beforeAll(async () => {
    db = await faultDatabase();
    proxy = await startTcpProxy(postgresPort());
    const env = { LOG_LEVEL: "info", RELAY_ACK_TIMEOUT_MS: "60000" };
    [a, b] = await Promise.all([spawnService({ DATABASE_URL: db.urlVia(proxy.port), ...env }, serve), spawnService({ DATABASE_URL: db.url, ...env }, serve)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await proxy?.close();
    await db?.close();
  });

  it("relays the events committed during the gap within a second of the database being back", { timeout: 60_000 }, async () => {
    const api = new Api(b.baseUrl, db.account.apiKey);
    const { agentId, phoneNumber } = await agentWithNumber(api);
    const relay = await RelayClient.connect(a.baseUrl, { agent_id: agentId }, db.account.apiKey);
    const relayedAt = new Map<string, number>();
    relay.ws.on("message", (data) => {
      const frame = JSON.parse(String(data));
      if (frame.type !== "event" || frame.event.event_type !== "sms.received") return;
      relayedAt.set(frame.event.payload.text, relayedAt.get(frame.event.payload.text) ?? Date.now());
      relay.ack(frame.event.event_id);
    });
    const text = async (body: string) => {
      const res = await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550180", text: body });
      expect(res.status).toBe(201);
    };
    const relayed = async (bodies: string[], ms: number) => {
      for (const end = Date.now() + ms; Date.now() < end && !bodies.every((t) => relayedAt.has(t)); ) await sleep(20);
    };
    // Before the cut: B's texts reach A's relay socket through the bus.
    await text("before");
    await relayed(["before"], 5_000);
    expect(relayedAt.has("before")).toBe(true);

    proxy.partition();
    await sleep(500);
    const during = ["during 1", "during 2", "during 3"];
    for (const body of during) await text(body);
    await sleep(2_000);
    expect(during.filter((t) => relayedAt.has(t))).toEqual([]);
    proxy.heal();
    const backAt = Date.now();
    // Nothing else is written: only A's own rescan can hand these over now.
    await relayed(during, 30_000);
    const after = Math.max(...during.map((t) => (relayedAt.get(t) ?? Infinity) - backAt));
    recordFigure("relay.missed_during_gap_relayed_after_back_ms", after, "<= 1000 (the reconnect rescans)");
    expect(after).toBeLessThanOrEqual(1_000);
    await relay.close();
  });
});
