import { and, eq, exists, inArray, ne, not, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accounts } from "../../core/db/schema/accounts.js";
import { events } from "../../core/db/schema/events.js";
import { ledgerEntries } from "../../core/db/schema/ledger-entries.js";
import { webhookDeliveries } from "../../core/db/schema/webhook-deliveries.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { percentile } from "../../harness/percentile.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";
import { recordFigure, sleep } from "./figures.js";

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * Events neither delivered, nor back in the mailbox, nor with a webhook delivery under way
 * (pending or sending): lost. What must hold after any fault (nothing lost).
 */
async function lostEvents(service: TestService): Promise<string[]> {
  const d = webhookDeliveries;
  const underWay = service.core.db
    .select({ one: d.seq })
    .from(d)
    .where(and(eq(d.eventSeq, events.seq), inArray(d.status, ["pending", "sending"])));
  const rows = await service.core.db
    .select({ eventId: events.eventId })
    .from(events)
    .where(and(ne(events.status, "delivered"), ne(events.route, "mailbox"), not(exists(underWay))));
  return rows.map((r) => r.eventId);
}

/** Accounts whose balance is not the sum of their ledger (there must be none). */
async function ledgerMismatches(service: TestService): Promise<unknown[]> {
  const sum = sql<number>`coalesce(sum(${ledgerEntries.amountMicros}), 0)`;
  return service.core.db
    .select({ accountId: accounts.accountId, balance: accounts.balanceMicros, ledger: sum })
    .from(accounts)
    .leftJoin(ledgerEntries, eq(ledgerEntries.accountId, accounts.accountId))
    .groupBy(accounts.accountId, accounts.balanceMicros)
    .having(sql`${accounts.balanceMicros} <> ${sum}`);
}

/** An agent with a number and a webhook to `url`, in the account `api` signs in to. */
async function agentWithWebhook(api: Api, url: string) {
  const agent = await agentWithNumber(api);
  expect((await api.post("/v1/webhooks", { agent_id: agent.agentId, url })).status).toBe(201);
  return agent;
}

async function text(api: Api, to: string, body: string): Promise<number> {
  const res = await api.post("/v1/sandbox/inbound/sms", { to_number: to, from_number: "+14155550123", text: body });
  expect(res.status).toBe(201);
  return Date.now();
}

const firstAttempt = (receiver: Receiver, body: string) =>
  receiver.requests.find((r) => r.body?.payload?.text === body && r.headers["x-service-delivery-attempt"] === "1");

// 40 agents' receivers hang; a healthy tenant's webhooks (its live turns too)
// arrive as fast as ever.
describe("40 hanging receivers beside a healthy one", () => {
  let service: TestService;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    service = await startTestService({ env: { ALLOW_PRIVATE_WEBHOOKS: "1", WEBHOOK_TIMEOUT_MS: "10000", TURN_TIMEOUT_MS: "60000" } });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await service?.stop();
  });

  it("delivers the healthy tenant's webhooks within a second", { timeout: 180_000 }, async () => {
    const hanging = await startReceiver(() => "hang");
    const healthy = await startReceiver(() => 200);
    receivers.push(hanging, healthy);
    // Four tenants with ten agents each, every agent's receiver hanging.
    const stuck: Array<{ api: Api; agentId: string; phoneNumber: string }> = [];
    for (let t = 0; t < 4; t++) {
      const api = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
      for (let a = 0; a < 10; a++) stuck.push({ api, ...(await agentWithWebhook(api, `${hanging.url}?agent=${t}-${a}`)) });
    }
    const tenant = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
    const good = await agentWithWebhook(tenant, healthy.url);

    // Three events for each hanging agent, then the healthy tenant's traffic while they hang.
    for (let round = 0; round < 3; round++) await Promise.all(stuck.map((s, i) => text(s.api, s.phoneNumber, `stuck ${i}.${round}`)));
    await hanging.waitFor(20);
    const sentAt = new Map<string, number>();
    for (let i = 0; i < 10; i++) {
      sentAt.set(`healthy ${i}`, await text(tenant, good.phoneNumber, `healthy ${i}`));
      await sleep(100);
    }
    // A live turn: the caller speaks, the call.utterance webhook must arrive in its own lane.
    const callId = await answeredCall(tenant, good.agentId);
    const phone = await Softphone.connect(service.baseUrl, callId, tenant.key!);
    const saidAt = Date.now();
    await phone.say("Hello, is this the healthy tenant?");
    // Long enough to see how late they are when they are late.
    await healthy.waitFor(11, () => true, 90_000);
    const latencies = [...sentAt].map(([body, at]) => firstAttempt(healthy, body)!.at - at);
    const utterance = healthy.requests.find((r) => r.headers["x-service-event"] === "call.utterance")!;
    const utteranceMs = utterance.at - saidAt;
    phone.close();

    recordFigure("receivers.healthy_webhook_p100_ms", Math.max(...latencies), "<= 1000");
    recordFigure("receivers.healthy_webhook_p50_ms", percentile(latencies, 50), "~100 or less");
    recordFigure("receivers.healthy_live_utterance_ms", utteranceMs, "<= 1000");
    recordFigure("receivers.hanging_requests_open", hanging.requests.length, "capped per receiver");
    expect(Math.max(...latencies)).toBeLessThanOrEqual(1_000);
    expect(utteranceMs).toBeLessThanOrEqual(1_000);
    // A live turn of a hanging agent: its call.utterance is sent at once, not after that agent's
    // unanswered texts (ordinary events) — live turns keep a per-agent order of their own.
    const stuckAgent = stuck[0]!;
    const stuckPhone = await Softphone.connect(service.baseUrl, await answeredCall(stuckAgent.api, stuckAgent.agentId), stuckAgent.api.key!);
    const stuckSaidAt = Date.now();
    await stuckPhone.say("Is anyone there?");
    const [stuckUtterance] = await hanging.waitFor(1, (r) => r.headers["x-service-event"] === "call.utterance", 15_000);
    stuckPhone.close();
    recordFigure("receivers.hanging_agent_live_utterance_ms", stuckUtterance!.at - stuckSaidAt, "<= 1000 (not behind the agent's hanging texts)");
    expect(stuckUtterance!.at - stuckSaidAt).toBeLessThanOrEqual(1_000);
    // The hanging agents' events are still on their way (or back in the mailbox), none dropped.
    expect(await lostEvents(service)).toEqual([]);
    expect(await ledgerMismatches(service)).toEqual([]);
  });
});

// A receiver fails one event (it hangs on it for a while, then recovers); the
// agent's newer events are first attempted when they happen, not after the failing one.
describe("a receiver that fails one event, then recovers", () => {
  let service: TestService;
  let receiver: Receiver;

  beforeAll(async () => {
    service = await startTestService({
      env: { ALLOW_PRIVATE_WEBHOOKS: "1", WEBHOOK_TIMEOUT_MS: "2000", WEBHOOK_RETRY_SCHEDULE: "500ms,500ms,500ms,500ms,500ms,500ms,500ms,500ms" },
    });
  });
  afterAll(async () => {
    await receiver?.close();
    await service?.stop();
  });

  it("never holds the newer events back, and delivers the failing one once the receiver recovers", { timeout: 60_000 }, async () => {
    const started = Date.now();
    const healthyFrom = started + 8_000;
    receiver = await startReceiver((_n, r) => (r.body?.payload?.text === "event 0" && Date.now() < healthyFrom ? "hang" : 200));
    const api = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
    const { phoneNumber } = await agentWithWebhook(api, receiver.url);
    // Event 0's first attempt hangs to its timeout; the newer events happen while it retries.
    const sentAt = [await text(api, phoneNumber, "event 0")];
    await receiver.waitFor(1);
    await sleep(2_200);
    for (let i = 1; i < 5; i++) {
      sentAt.push(await text(api, phoneNumber, `event ${i}`));
      await sleep(900);
    }
    await receiver.waitFor(4, (r) => /^event [1-4]$/.test(r.body?.payload?.text), 30_000);
    const delays = [1, 2, 3, 4].map((i) => firstAttempt(receiver, `event ${i}`)!.at - sentAt[i]!);
    // The failing event is delivered once the receiver is healthy again.
    await receiver.waitFor(1, (r) => r.body?.payload?.text === "event 0" && r.at >= healthyFrom, 30_000);
    const triedBeforeHealthy = [1, 2, 3, 4].filter((i) => firstAttempt(receiver, `event ${i}`)!.at < healthyFrom).length;
    recordFigure("failing_receiver.newer_first_attempt_max_delay_ms", Math.max(...delays), "<= 1000 (not held back)");
    recordFigure("failing_receiver.newer_events_tried_while_failing", `${triedBeforeHealthy} of 4`, "4 of 4");
    expect(Math.max(...delays)).toBeLessThanOrEqual(1_000);
    expect(triedBeforeHealthy).toBe(4);
    expect(await lostEvents(service)).toEqual([]);
    expect(await ledgerMismatches(service)).toEqual([]);
  });
});

// Concurrency is capped per receiver: a receiver that answers every delivery
// slowly with an error (an answer, so its breaker stays closed) while its failed deliveries pile
// up as retries. Retries hold nothing back, so without the cap they would all be in flight at
// once; with it, the receiver never has more than WEBHOOK_RECEIVER_CONCURRENCY per lane (here
// first attempts and retries: two lanes).
describe("a slow, failing receiver with many retries due", () => {
  const CAP = 2;
  let service: TestService;
  let receiver: Receiver;

  beforeAll(async () => {
    service = await startTestService({
      env: {
        ALLOW_PRIVATE_WEBHOOKS: "1",
        WEBHOOK_RECEIVER_CONCURRENCY: String(CAP),
        WEBHOOK_TIMEOUT_MS: "5000",
        WEBHOOK_RETRY_SCHEDULE: "50ms,50ms,50ms,50ms,50ms,50ms,50ms,50ms",
      },
    });
  });
  afterAll(async () => {
    await receiver?.close();
    await service?.stop();
  });

  it("never has more than the cap in flight per lane", { timeout: 60_000 }, async () => {
    receiver = await startReceiver(() => ({ status: 503, afterMs: 600 }));
    const api = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
    const { phoneNumber } = await agentWithWebhook(api, receiver.url);
    for (let i = 0; i < 10; i++) await text(api, phoneNumber, `pile ${i}`);
    await sleep(8_000);
    // The most requests the receiver had open at once: each is open from arrival to answer.
    const edges = receiver.requests.flatMap((r) => [
      { at: r.at, open: 1 },
      { at: r.answeredAt ?? Infinity, open: -1 },
    ]);
    edges.sort((x, y) => x.at - y.at || x.open - y.open);
    let open = 0;
    let most = 0;
    for (const edge of edges) most = Math.max(most, (open += edge.open));
    const retries = receiver.requests.filter((r) => r.headers["x-service-delivery-attempt"] !== "1").length;
    recordFigure("receivers.failing_receiver_most_in_flight", most, `<= ${2 * CAP} (cap ${CAP} per lane: first attempts, retries)`);
    expect(retries).toBeGreaterThan(2 * CAP);
    expect(most).toBeGreaterThanOrEqual(CAP);
    expect(most).toBeLessThanOrEqual(2 * CAP);
  });
});
