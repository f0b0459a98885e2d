import { describe, expect, it } from "vitest";
import { Api } from "../../harness/api.js";
import { spawnService } from "../../harness/process.js";
import { startReceiver } from "../support/receiver.js";
import { onPostgres } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";
import { faultDatabase, ledgerMismatches, recordFigure, serve, sleep } from "./figures.js";

const env = (url: string) => ({ DATABASE_URL: url, ALLOW_PRIVATE_WEBHOOKS: "1", WEBHOOK_TIMEOUT_MS: "1500", LOG_LEVEL: "info" });

// The process is SIGKILLed while a receiver holds a delivery. The attempt was
// recorded before it was sent, so the re-send is attempt 2 and the log shows both.
describe.runIf(onPostgres)("a process SIGKILLed in the middle of a delivery", () => {
  it("re-sends as the next attempt, logs every attempt and loses nothing", { timeout: 120_000 }, async () => {
    const db = await faultDatabase();
    const receiver = await startReceiver((n) => (n === 0 ? "hang" : 200));
    try {
      const first = await spawnService(env(db.url), serve);
      const api = new Api(first.baseUrl, db.account.apiKey);
      const { agentId, phoneNumber } = await agentWithNumber(api);
      await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url });
      const texts = ["killed mid-delivery", "after it", "and after that"];
      for (const text of texts) {
        expect((await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550190", text })).status).toBe(201);
      }
      const [inFlight] = await receiver.waitFor(1);
      first.kill();
      await first.exited;

      const second = await spawnService(env(db.url), serve);
      const redelivered = (await receiver.waitFor(2, (r) => r.body.event_id === inFlight!.body.event_id, 30_000))[1]!;
      await receiver.waitFor(texts.length + 1, () => true, 30_000);
      const api2 = new Api(second.baseUrl, db.account.apiKey);
      let attempts: any[] = [];
      for (let i = 0; i < 50; i++) {
        attempts = (await api2.get("/v1/webhooks/deliveries", { query: { agent_id: agentId } })).body.data;
        if (attempts.filter((a) => a.outcome === "succeeded").length >= texts.length) break;
        await sleep(100);
      }
      const ofKilled = attempts.filter((a) => a.message_id === inFlight!.body.event_id).sort((a, b) => a.attempt - b.attempt);
      const pending = (await api2.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data;
      const undelivered = await db.sql`select event_id from events where agent_id = ${agentId} and status <> 'delivered'`;
      recordFigure("killed.resend_attempt_header", redelivered.headers["x-service-delivery-attempt"] as string, "2");
      recordFigure("killed.attempts_logged_for_killed_event", ofKilled.length, "2 (the killed one, then the re-send)");
      recordFigure("killed.events_lost", undelivered.length + pending.length, "0");
      expect(redelivered.headers["x-service-delivery-attempt"]).toBe("2");
      expect(ofKilled).toEqual([
        expect.objectContaining({ attempt: 1, outcome: "failed", status_code: null }),
        expect.objectContaining({ attempt: 2, outcome: "succeeded", status_code: 200 }),
      ]);
      expect(undelivered).toEqual([]);
      expect(await ledgerMismatches(db.sql)).toEqual([]);
      await second.stop();
    } finally {
      await receiver.close();
      await db.close();
    }
  });
});
