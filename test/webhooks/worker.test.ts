import { eq, inArray } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { Core } from "../../core/context.js";
import { events } from "../../core/db/schema/events.js";
import { webhookAttempts } from "../../core/db/schema/webhook-attempts.js";
import { webhookDeliveries } from "../../core/db/schema/webhook-deliveries.js";
import { webhooks } from "../../core/db/schema/webhooks.js";
import { newId } from "../../core/ids.js";
import { enqueueDelivery, IN_FLIGHT } from "../../core/webhooks/deliveries.js";
import { findWebhook } from "../../core/webhooks/webhooks.js";
import { DeliveryWorker } from "../../core/webhooks/worker.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { manualClock } from "../billing/support.js";
import { type Answer, startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";

// The delivery worker, driven by hand. The service's own worker is stopped; each test builds its
// own DeliveryWorker (inside the test, so the mutation run credits the test with what it runs)
// and kicks it itself. The worker's one-second sweep runs on a faked setInterval, so a job is
// only claimed when something the test is about wakes the worker: start(), the bus, a retry's
// timer, a finished delivery, or the sweep when the test moves it. Everything else is real: the
// database, the bus, and receivers on loopback.
let service: TestService;
let core: Core;
let account: TestAccount;
let api: Api;
let realNow: () => Date;
const workers: DeliveryWorker[] = [];
const receivers: Array<Awaited<ReturnType<typeof startReceiver>>> = [];

// Nothing listens on the discard port: every attempt there is refused, an unanswered attempt.
const SILENT_URL = "http://127.0.0.1:9/hook";

beforeAll(async () => {
  service = await startTestService({
    env: {
      ALLOW_PRIVATE_WEBHOOKS: "1",
      WEBHOOK_RETRY_SCHEDULE: "10s,20s,30s",
      WEBHOOK_LIVE_RETRY_SCHEDULE: "100ms,200ms",
      // Longer than the worker's three-second wait at shutdown, so that wait can be seen.
      WEBHOOK_TIMEOUT_MS: "8000",
      WEBHOOK_RECEIVER_CONCURRENCY: "2",
    },
  });
  core = service.core;
  await core.webhooks.close();
  realNow = core.now;
  account = await createAccount(core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());
beforeEach(async () => {
  // A job left by an earlier test is never claimed by this one's worker.
  await core.db
    .update(webhookDeliveries)
    .set({ status: "abandoned" })
    .where(inArray(webhookDeliveries.status, ["pending", "sending"]));
  vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
});
afterEach(async () => {
  // Receivers first: a hanging request then ends at once, and close() need not wait for it.
  await Promise.all(receivers.splice(0).map((r) => r.close()));
  await Promise.all(workers.splice(0).map((w) => w.close()));
  vi.useRealTimers();
  core.now = realNow;
});

/** A worker of this test (build it after any manual clock: its breakers read the clock it had). */
function newWorker(): DeliveryWorker {
  const worker = new DeliveryWorker(core);
  workers.push(worker);
  return worker;
}

async function receiver(answer: Answer) {
  const started = await startReceiver(answer);
  receivers.push(started);
  return started;
}

async function agentWithWebhook(url: string) {
  const { agentId, phoneNumber } = await agentWithNumber(api);
  expect((await api.post("/v1/webhooks", { agent_id: agentId, url })).status).toBe(201);
  const webhook = (await findWebhook(core.db, agentId))!;
  return { agentId, phoneNumber, webhookId: webhook.webhookId };
}

/** Queues a job as the product does (which announces it on the bus); `dueAt`/`attempts` reshape it in the same transaction. */
async function enqueue(
  agent: { agentId: string; webhookId: string },
  extra: { messageType?: string; liveTurnId?: string; dueAt?: Date; attempts?: number } = {},
) {
  const messageId = newId("evt");
  await core.db.transaction(async (tx) => {
    await enqueueDelivery(core, tx, {
      accountId: account.accountId,
      agentId: agent.agentId,
      webhookId: agent.webhookId,
      eventSeq: null,
      messageId,
      messageType: extra.messageType ?? "test.message",
      body: { message_id: messageId },
      liveTurnId: extra.liveTurnId,
    });
    if (extra.dueAt || extra.attempts) {
      await tx
        .update(webhookDeliveries)
        .set({ ...(extra.dueAt ? { nextAttemptAt: extra.dueAt } : {}), ...(extra.attempts ? { attempts: extra.attempts } : {}) })
        .where(eq(webhookDeliveries.messageId, messageId));
    }
  });
  const [row] = await core.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.messageId, messageId));
  return row!;
}

async function deliveryRow(deliveryId: string) {
  const [row] = await core.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.deliveryId, deliveryId));
  return row!;
}

/** The agent's attempts whose outcome is known. */
async function finishedAttempts(agentId: string) {
  const rows = await core.db.select().from(webhookAttempts).where(eq(webhookAttempts.agentId, agentId)).orderBy(webhookAttempts.attemptId);
  return rows.filter((r) => r.error !== IN_FLIGHT);
}

async function deliveryCount(outcome: "succeeded" | "failed") {
  return (await core.metrics.webhookDeliveries.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
}

// Generous: the machine may be busy, and every wait here ends as soon as its condition holds.
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 10_000 });
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const later = (clock: { now(): Date }, ms: number) => new Date(clock.now().getTime() + ms);

describe("waking the worker", () => {
  it("claims at start what is already due, then wakes on the bus, and on the sweep for a job nobody announced", async () => {
    const hook = await receiver(() => 200);
    const agent = await agentWithWebhook(hook.url);
    const waiting = await enqueue(agent);
    newWorker().start();
    await hook.waitFor(1, undefined, 5_000);
    await poll(async () => (await deliveryRow(waiting.deliveryId)).status).toBe("succeeded");
    // Let the claim that the finished delivery started run out, so only the bus can wake it now.
    await pause(500);

    const announced = await enqueue(agent);
    const [, second] = await hook.waitFor(2, undefined, 5_000);
    expect(second!.body.message_id).toBe(announced.messageId);
    await poll(async () => (await deliveryRow(announced.deliveryId)).status).toBe("succeeded");
    await pause(500);

    // A job due without a word on the bus (as when a retry's time comes, or a process died
    // holding a claim): written straight to the table, it waits until the sweep runs.
    const unannounced = { deliveryId: newId("whd"), messageId: newId("evt") };
    await core.db.insert(webhookDeliveries).values({
      ...unannounced,
      accountId: account.accountId,
      agentId: agent.agentId,
      webhookId: agent.webhookId,
      messageType: "test.message",
      body: { message_id: unannounced.messageId },
      nextAttemptAt: new Date(Date.now() - 1_000),
    });
    await pause(400);
    expect(hook.requests).toHaveLength(2);
    vi.advanceTimersByTime(1_000);
    const [, , third] = await hook.waitFor(3, undefined, 5_000);
    expect(third!.body.message_id).toBe(unannounced.messageId);
  });

  it("claims again when kicked while a claim is under way, so a job that fell due meanwhile is not left for the sweep", async () => {
    const clock = manualClock(core, new Date());
    const hook = await receiver(() => 202);
    const agent = await agentWithWebhook(hook.url);
    await enqueue(agent, { messageType: "call.session.start", dueAt: later(clock, 10_000) });
    const worker = newWorker();
    // The live lane is claimed first, and reads the clock at once: its job is not due yet.
    worker.kick();
    clock.advance(10_000);
    // This kick comes while that claim is still under way.
    worker.kick();
    await hook.waitFor(1, undefined, 5_000);
  });

  it("wakes for a retry when its wait is over", async () => {
    const hook = await receiver((n) => (n === 0 ? 500 : 200));
    const agent = await agentWithWebhook(hook.url);
    // A live turn's message: its retry comes after 100 ms ±20%, by the worker's own timer.
    const job = await enqueue(agent, { liveTurnId: "turn_worker_rules" });
    newWorker().kick();
    const tries = await hook.waitFor(2, undefined, 5_000);
    expect(tries.map((r) => r.headers["x-service-delivery-attempt"])).toEqual(["1", "2"]);
    await poll(async () => (await deliveryRow(job.deliveryId)).status).toBe("succeeded");
  });
});

describe("what a delivery sends and records", () => {
  it("posts the job's body with its headers, and counts the outcome in the metrics", async () => {
    const hook = await receiver((n) => (n === 0 ? 204 : 500));
    const agent = await agentWithWebhook(hook.url);
    const succeeded = await deliveryCount("succeeded");
    const failed = await deliveryCount("failed");
    const job = await enqueue(agent, { messageType: "sms.received" });
    const worker = newWorker();
    worker.kick();
    const [request] = await hook.waitFor(1, undefined, 5_000);
    expect(request!.raw).toBe(JSON.stringify({ message_id: job.messageId }));
    expect(request!.headers).toMatchObject({
      "content-type": "application/json",
      "user-agent": "agentline-webhooks/1",
      "x-service-event": "sms.received",
      "x-service-event-id": job.messageId,
      "x-service-delivery-attempt": "1",
      "webhook-id": job.messageId,
    });
    await poll(() => deliveryCount("succeeded")).toBe(succeeded + 1);
    expect(await deliveryCount("failed")).toBe(failed);

    await enqueue(agent);
    worker.kick();
    await poll(() => deliveryCount("failed")).toBe(failed + 1);
    expect(await deliveryCount("succeeded")).toBe(succeeded + 1);
  });

  it("gives a job back to the mailbox when its webhook was deleted while it waited", async () => {
    const hook = await receiver(() => 200);
    const agent = await agentWithWebhook(hook.url);
    await api.post("/v1/sandbox/inbound/sms", { to_number: agent.phoneNumber, from_number: "+14155550190", text: "orphaned" });
    const [job] = await core.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.agentId, agent.agentId));
    expect((await api.delete("/v1/webhooks", { query: { agent_id: agent.agentId } })).status).toBe(200);
    newWorker().kick();
    await poll(async () => (await deliveryRow(job!.deliveryId)).status).toBe("abandoned");
    const [event] = await core.db.select().from(events).where(eq(events.seq, job!.eventSeq!));
    expect(event).toMatchObject({ status: "pending", route: "mailbox" });
    expect(hook.requests).toEqual([]);
  });
});

describe("stopping", () => {
  it("waits for the deliveries in flight, and claims nothing once closed", async () => {
    const hook = await receiver(() => ({ status: 202, afterMs: 300 }));
    const agent = await agentWithWebhook(hook.url);
    const inFlight = await enqueue(agent);
    const worker = newWorker();
    worker.kick();
    await hook.waitFor(1, undefined, 5_000);
    await worker.close();
    expect(await deliveryRow(inFlight.deliveryId)).toMatchObject({ status: "succeeded", lastStatusCode: 202 });
    // The delivery's end kicked the worker as it closed; any pass that started is over before the next job is due.
    await vi.waitFor(() => expect((worker as unknown as { claiming: boolean }).claiming).toBe(false));

    const afterClose = await enqueue(agent);
    worker.kick();
    await pause(400);
    expect(hook.requests).toHaveLength(1);
    expect(await deliveryRow(afterClose.deliveryId)).toMatchObject({ status: "pending", attempts: 0 });
  });

  it("stops waiting after about three seconds for a receiver that does not answer; the job is claimed again later", async () => {
    const hook = await receiver(() => "hang");
    const agent = await agentWithWebhook(hook.url);
    const job = await enqueue(agent);
    const worker = newWorker();
    worker.kick();
    await hook.waitFor(1, undefined, 5_000);
    const started = Date.now();
    await worker.close();
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(2_900);
    // Well short of the 8 s webhook timeout.
    expect(waited).toBeLessThan(6_000);
    expect(await deliveryRow(job.deliveryId)).toMatchObject({ status: "sending", attempts: 1 });
  });
});

// The receiver breaker (receiver-breakers.ts) as the worker applies it: three unanswered
// attempts in a row leave the receiver alone for 30 s of the service's clock, in the ordinary
// lanes only; then one delivery at a time per lane.
describe("the receiver breaker", () => {
  it("after three unanswered attempts, holds the receiver's ordinary jobs (due, not given up) but still tries a live one", async () => {
    const clock = manualClock(core, new Date());
    const agent = await agentWithWebhook(SILENT_URL);
    const jobs = [await enqueue(agent), await enqueue(agent), await enqueue(agent), await enqueue(agent)];
    const worker = newWorker();
    worker.kick();
    // Each failure lets the agent's next message go (a retry holds nothing back), until the third.
    await poll(async () => (await finishedAttempts(agent.agentId)).length).toBe(3);
    await pause(300);
    worker.kick();
    await pause(300);
    expect(await finishedAttempts(agent.agentId)).toHaveLength(3);
    expect(await deliveryRow(jobs[3]!.deliveryId)).toMatchObject({ status: "pending", attempts: 0 });

    // A caller is waiting on a live message: the breaker does not hold it.
    const live = await enqueue(agent, { messageType: "call.session.start" });
    worker.kick();
    await poll(async () => (await finishedAttempts(agent.agentId)).map((a) => a.messageId)).toContain(live.messageId);

    clock.advance(30_000);
    worker.kick();
    await poll(async () => (await deliveryRow(jobs[3]!.deliveryId)).attempts).toBe(1);
  });

  it("does not count an HTTP error as silence", async () => {
    manualClock(core, new Date());
    const hook = await receiver(() => 500);
    const agent = await agentWithWebhook(hook.url);
    for (let i = 0; i < 4; i++) await enqueue(agent);
    newWorker().kick();
    await hook.waitFor(4, undefined, 5_000);
  });

  it("does not count a live message's silence towards opening it", async () => {
    manualClock(core, new Date());
    const agent = await agentWithWebhook(SILENT_URL);
    const worker = newWorker();
    const live = await enqueue(agent, { messageType: "call.session.start" });
    worker.kick();
    await poll(async () => (await finishedAttempts(agent.agentId)).length).toBe(1);
    expect((await finishedAttempts(agent.agentId))[0]!.messageId).toBe(live.messageId);
    // Two ordinary silences: with the live one that makes three, but only two count.
    const ordinary = [await enqueue(agent), await enqueue(agent), await enqueue(agent)];
    worker.kick();
    await poll(async () => (await deliveryRow(ordinary[2]!.deliveryId)).attempts).toBe(1);
  });

  it("once its 30 s are over, lets one delivery at a time through in a lane", async () => {
    const clock = manualClock(core, new Date());
    const agent = await agentWithWebhook(SILENT_URL);
    for (let i = 0; i < 3; i++) await enqueue(agent);
    const worker = newWorker();
    worker.kick();
    await poll(async () => (await finishedAttempts(agent.agentId)).length).toBe(3);
    // The receiver comes back, slow: it holds what it gets. The three retries are due by now.
    const hook = await receiver(() => "hang");
    await core.db.update(webhooks).set({ url: hook.url }).where(eq(webhooks.agentId, agent.agentId));
    await pause(300);
    clock.advance(30_000);
    worker.kick();
    await hook.waitFor(1, undefined, 5_000);
    await pause(300);
    // Kicked again with one in flight: still one, though the receiver's concurrency is two.
    worker.kick();
    await pause(400);
    expect(hook.requests).toHaveLength(1);
    expect(hook.requests[0]!.headers["x-service-delivery-attempt"]).toBe("2");
  });
});

describe("the receiver's concurrency", () => {
  it("gives a receiver a second delivery while one is in flight, and not a third (WEBHOOK_RECEIVER_CONCURRENCY=2)", async () => {
    const clock = manualClock(core, new Date());
    const hook = await receiver(() => "hang");
    const agent = await agentWithWebhook(hook.url);
    // Retries, which hold nothing back: each falls due on its own.
    await enqueue(agent, { attempts: 1 });
    await enqueue(agent, { attempts: 1, dueAt: later(clock, 5_000) });
    const third = await enqueue(agent, { attempts: 1, dueAt: later(clock, 10_000) });
    const worker = newWorker();
    worker.kick();
    await hook.waitFor(1, undefined, 5_000);
    await pause(200);
    clock.advance(5_000);
    worker.kick();
    await hook.waitFor(2, undefined, 5_000);
    await pause(200);
    clock.advance(5_000);
    worker.kick();
    await pause(400);
    expect(hook.requests).toHaveLength(2);
    expect(await deliveryRow(third.deliveryId)).toMatchObject({ status: "pending", attempts: 1 });
  });
});
