import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type DatabaseHandle, openDatabase } from "../../core/db/database.js";
import { createLogger } from "../../core/logger.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { type ServiceProcess, spawnService } from "../../harness/process.js";
import { RelayClient } from "../../harness/relay-client.js";
import { createTestDatabase } from "../support/postgres.js";
import { startReceiver } from "../support/receiver.js";
import { onPostgres } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";

const serve = ["node", "dist/bin/agentline.js", "serve"];
const env = (url: string) => ({ DATABASE_URL: url, ALLOW_PRIVATE_WEBHOOKS: "1", WEBHOOK_TIMEOUT_MS: "1500", TURN_TIMEOUT_MS: "60000", LOG_LEVEL: "info" });

/** A database of its own, and an account in it made directly (no process needed). */
async function sharedDatabase() {
  const database = await createTestDatabase(inject("postgresTemplate")!);
  const handle: DatabaseHandle = await openDatabase({ url: database.url, dataDir: "unused", logger: createLogger("silent") });
  const account: TestAccount = await createAccount({ db: handle.db });
  await handle.close();
  return { ...database, account };
}

// Several gateway processes on one PostgreSQL: whatever process a request lands on, live things
// held by another process are reached through the bus.
describe.runIf(onPostgres)("several processes on one PostgreSQL", () => {
  let db: Awaited<ReturnType<typeof sharedDatabase>>;
  let a: ServiceProcess;
  let b: ServiceProcess;

  beforeAll(async () => {
    db = await sharedDatabase();
    [a, b] = await Promise.all([spawnService(env(db.url), serve), spawnService(env(db.url), serve)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await db?.drop();
  });

  it("delivers on A's relay socket an event caused through B", async () => {
    const apiA = new Api(a.baseUrl, db.account.apiKey);
    const apiB = new Api(b.baseUrl, db.account.apiKey);
    const { agentId, phoneNumber } = await agentWithNumber(apiA);
    const relay = await RelayClient.connect(a.baseUrl, { agent_id: agentId }, db.account.apiKey);
    await apiB.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550180", text: "via B" });
    const [event] = await relay.waitForEvents(1);
    expect(event).toMatchObject({ event_type: "sms.received", payload: { text: "via B" } });
    await relay.close();
  });

  it("speaks into a call held by A a context push sent to B", async () => {
    const apiA = new Api(a.baseUrl, db.account.apiKey);
    const apiB = new Api(b.baseUrl, db.account.apiKey);
    const { agentId } = await agentWithNumber(apiA);
    const callId = await answeredCall(apiA, agentId);
    const phone = await Softphone.connect(a.baseUrl, callId, db.account.apiKey);
    const turnId = await phone.say("Is anyone there?");
    const pushed = await apiB.post(`/v1/calls/${callId}/context`, { text: "Yes, speaking from B." }, { query: { turn_id: turnId } });
    expect(pushed.status).toBe(200);
    expect(await phone.next((f) => f.type === "speech")).toMatchObject({ text: "Yes, speaking from B.", turn_id: turnId });
    // A relay on B hears the utterance said on A's softphone too.
    const relay = await RelayClient.connect(b.baseUrl, { agent_id: agentId }, db.account.apiKey);
    await phone.say("Thanks!");
    await relay.waitForEvents(1, (e) => e.payload.text === "Thanks!");
    await relay.close();
    phone.close();
  });

  it("replaces a relay socket on A with a newer one on B", async () => {
    const { agentId } = await agentWithNumber(new Api(a.baseUrl, db.account.apiKey));
    const older = await RelayClient.connect(a.baseUrl, { agent_id: agentId }, db.account.apiKey);
    const newer = await RelayClient.connect(b.baseUrl, { agent_id: agentId }, db.account.apiKey);
    expect((await older.closed).code).toBe(4000);
    await newer.close();
  });
});

describe.runIf(onPostgres)("a process killed in the middle of a delivery", () => {
  it("loses nothing: after a restart the event is delivered", { timeout: 120_000 }, async () => {
    const db = await sharedDatabase();
    const receiver = await startReceiver((n) => (n === 0 ? "hang" : 200));
    try {
      const first = await spawnService(env(db.url), serve);
      const api = new Api(first.baseUrl, db.account.apiKey);
      const { agentId, phoneNumber } = await agentWithNumber(api);
      await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url });
      await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550190", text: "survive this" });
      const [inFlight] = await receiver.waitFor(1);
      first.kill();
      await first.exited;

      const second = await spawnService(env(db.url), serve);
      // The dead process's claim lapses (timeout + 5 s), then the new process claims and delivers.
      const [, redelivered] = await receiver.waitFor(2, () => true, 30_000);
      expect(redelivered!.body.event_id).toBe(inFlight!.body.event_id);
      const api2 = new Api(second.baseUrl, db.account.apiKey);
      // Every attempt is logged, the killed one too; the re-send is attempt 2.
      expect(redelivered!.headers["x-service-delivery-attempt"]).toBe("2");
      let attempts: any[] = [];
      for (let i = 0; i < 50 && !attempts.some((a) => a.outcome === "succeeded"); i++) {
        attempts = (await api2.get("/v1/webhooks/deliveries", { query: { agent_id: agentId } })).body.data;
        if (!attempts.some((a) => a.outcome === "succeeded")) await new Promise((r) => setTimeout(r, 100));
      }
      expect(attempts).toEqual([
        expect.objectContaining({ attempt: 2, status_code: 200, outcome: "succeeded" }),
        expect.objectContaining({ attempt: 1, status_code: null, outcome: "failed", error: expect.stringMatching(/process stopped/) }),
      ]);
      expect((await api2.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data).toEqual([]);
      await second.stop();
    } finally {
      await receiver.close();
      await db.drop();
    }
  });
});
