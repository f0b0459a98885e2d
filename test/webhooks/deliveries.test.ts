import { and, eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { events } from "../../core/db/schema/events.js";
import { turns } from "../../core/db/schema/turns.js";
import { webhookAttempts } from "../../core/db/schema/webhook-attempts.js";
import { webhookDeliveries } from "../../core/db/schema/webhook-deliveries.js";
import { EVENTS_CREATED_CHANNEL } from "../../core/events/channels.js";
import { newId } from "../../core/ids.js";
import {
  abandonDelivery,
  type ClaimOptions,
  claimDueDeliveries,
  type DeliveryJob,
  enqueueDelivery,
  IN_FLIGHT,
  recordAttempt,
  recordAttemptStart,
} from "../../core/webhooks/deliveries.js";
import { findWebhook, testWebhook } from "../../core/webhooks/webhooks.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";

// Webhook delivery jobs (core/webhooks/deliveries.ts): queued in their lanes, claimed, their
// attempts recorded, retried and given up. Driven directly against the database: the service's
// own worker is stopped, so jobs stay where these tests put them.
const SCHEDULE = [10_000, 20_000, 30_000];
let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService({
    env: { ALLOW_PRIVATE_WEBHOOKS: "1", WEBHOOK_RETRY_SCHEDULE: "10s,20s,30s", WEBHOOK_LIVE_RETRY_SCHEDULE: "100ms,200ms", WEBHOOK_TIMEOUT_MS: "500" },
  });
  await service.core.webhooks.close();
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());
// Every claim test starts with nothing due but its own jobs.
beforeEach(async () => {
  await service.core.db
    .update(webhookDeliveries)
    .set({ status: "abandoned" })
    .where(inArray(webhookDeliveries.status, ["pending", "sending"]));
});

async function agentWithWebhook() {
  const { agentId, phoneNumber } = await agentWithNumber(api);
  await api.post("/v1/webhooks", { agent_id: agentId, url: "http://127.0.0.1:9/hook" });
  const webhook = (await findWebhook(service.core.db, agentId))!;
  return { agentId, phoneNumber, webhookId: webhook.webhookId };
}

/** An inbound SMS: an event routed to the webhook, and its delivery job. */
async function smsJob(agent: { agentId: string; phoneNumber: string }, text = "hello") {
  await api.post("/v1/sandbox/inbound/sms", { to_number: agent.phoneNumber, from_number: "+14155550170", text });
  const rows = await service.core.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.agentId, agent.agentId)).orderBy(webhookDeliveries.seq);
  return rows.at(-1)!;
}

async function enqueue(agent: { agentId: string; webhookId: string }, extra: { messageType?: string; liveTurnId?: string } = {}) {
  const messageId = newId("evt");
  await service.core.db.transaction((tx) =>
    enqueueDelivery(service.core, tx, {
      accountId: account.accountId,
      agentId: agent.agentId,
      webhookId: agent.webhookId,
      eventSeq: null,
      messageId,
      messageType: extra.messageType ?? "test.message",
      body: { n: 1 },
      liveTurnId: extra.liveTurnId,
    }),
  );
  const [row] = await service.core.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.messageId, messageId));
  return row!;
}

/** A job already tried once and due for its retry now. */
async function dueRetry(agent: { agentId: string; webhookId: string }) {
  const row = await enqueue(agent);
  await service.core.db
    .update(webhookDeliveries)
    .set({ attempts: 1, nextAttemptAt: new Date(Date.now() - 1_000) })
    .where(eq(webhookDeliveries.deliveryId, row.deliveryId));
  return row;
}

const claim = (options: Partial<ClaimOptions> & Pick<ClaimOptions, "lane">) =>
  claimDueDeliveries(service.core, { limit: 10, skipWebhooks: [], receiverRoom: new Map(), perReceiver: 4, ...options });

async function deliveryRow(deliveryId: string) {
  const [row] = await service.core.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.deliveryId, deliveryId));
  return row!;
}
async function eventRow(seq: number) {
  const [row] = await service.core.db.select().from(events).where(eq(events.seq, seq));
  return row!;
}
async function turnRow(turnId: string) {
  const [row] = await service.core.db.select().from(turns).where(eq(turns.turnId, turnId));
  return row!;
}

const failed = { statusCode: 500, error: null, latencyMs: 12 };

describe("enqueueDelivery", () => {
  it("queues an ordinary message for the ordinary lanes, due now", async () => {
    const agent = await agentWithWebhook();
    const before = Date.now();
    const row = await enqueue(agent);
    expect(row.deliveryId).toMatch(/^whd_/);
    expect(row).toMatchObject({
      live: false,
      turnId: null,
      status: "pending",
      attempts: 0,
      webhookId: agent.webhookId,
      messageType: "test.message",
      body: { n: 1 },
    });
    expect(row.nextAttemptAt.getTime()).toBeGreaterThanOrEqual(before - 1_000);
    expect(row.nextAttemptAt.getTime()).toBeLessThanOrEqual(Date.now() + 1_000);
  });

  it("puts a live turn's message and a session start in the live lane", async () => {
    const agent = await agentWithWebhook();
    expect(await enqueue(agent, { liveTurnId: "turn_x" })).toMatchObject({ live: true, turnId: "turn_x" });
    expect(await enqueue(agent, { messageType: "call.session.start" })).toMatchObject({ live: true, turnId: null });
    expect(await enqueue(agent, { messageType: "call.session.end" })).toMatchObject({ live: false, turnId: null });
  });
});

describe("claimDueDeliveries", () => {
  it("returns an empty list when nothing is due", async () => {
    expect(await claim({ lane: "first" })).toEqual([]);
    expect(await claim({ lane: "retry" })).toEqual([]);
  });

  it("claims a first attempt only in the first lane, and counts the attempt", async () => {
    const agent = await agentWithWebhook();
    const row = await enqueue(agent);
    expect(await claim({ lane: "retry" })).toEqual([]);
    expect(await claim({ lane: "live" })).toEqual([]);
    const [job, ...rest] = await claim({ lane: "first" });
    expect(rest).toEqual([]);
    expect(job).toMatchObject({ deliveryId: row.deliveryId, status: "sending", attempts: 1 });
    expect(job!.claimedUntil!.getTime()).toBeGreaterThan(Date.now() + 5_000);
  });

  it("claims a retry only in the retry lane", async () => {
    const agent = await agentWithWebhook();
    const row = await dueRetry(agent);
    expect(await claim({ lane: "first" })).toEqual([]);
    expect((await claim({ lane: "retry" })).map((j) => [j.deliveryId, j.attempts])).toEqual([[row.deliveryId, 2]]);
  });

  it("holds an agent's second message while its first awaits its first attempt", async () => {
    const agent = await agentWithWebhook();
    const first = await enqueue(agent);
    await enqueue(agent);
    expect((await claim({ lane: "first" })).map((j) => j.deliveryId)).toEqual([first.deliveryId]);
    // The first is now in flight on its first attempt: the second still waits.
    expect(await claim({ lane: "first" })).toEqual([]);
  });

  it("leaves alone the receivers it is told to skip", async () => {
    const agent = await agentWithWebhook();
    const row = await enqueue(agent);
    expect(await claim({ lane: "first", skipWebhooks: [agent.webhookId] })).toEqual([]);
    expect(await claim({ lane: "first", skipWebhooks: ["wh_other"] })).toMatchObject([{ deliveryId: row.deliveryId }]);
  });

  it("claims again a job whose claim lapsed, marking its unanswered attempt as interrupted", async () => {
    const agent = await agentWithWebhook();
    const row = await enqueue(agent);
    const [job] = await claim({ lane: "first" });
    const attemptId = await recordAttemptStart(service.core, job!, "http://127.0.0.1:9/hook");
    expect(await claim({ lane: "first" })).toEqual([]);
    await service.core.db
      .update(webhookDeliveries)
      .set({ claimedUntil: new Date(Date.now() - 1_000) })
      .where(eq(webhookDeliveries.deliveryId, row.deliveryId));
    // Its attempt was counted when it was claimed, so it comes back in the retry lane.
    expect(await claim({ lane: "first" })).toEqual([]);
    expect(await claim({ lane: "retry" })).toMatchObject([{ deliveryId: row.deliveryId, attempts: 2, status: "sending" }]);
    const [attempt] = await service.core.db.select().from(webhookAttempts).where(eq(webhookAttempts.attemptId, attemptId));
    expect(attempt!.error).toBe("no answer recorded: the delivering process stopped during this attempt");
  });

  it("gives a receiver no more than its room", async () => {
    const agent = await agentWithWebhook();
    await dueRetry(agent);
    await dueRetry(agent);
    await dueRetry(agent);
    expect(await claim({ lane: "retry", receiverRoom: new Map([[agent.webhookId, 0]]) })).toEqual([]);
    expect(await claim({ lane: "retry", receiverRoom: new Map([[agent.webhookId, 1]]) })).toHaveLength(1);
    expect(await claim({ lane: "retry", perReceiver: 1 })).toHaveLength(1);
    expect(await claim({ lane: "retry", receiverRoom: new Map([["wh_other", 0]]) })).toHaveLength(1);
  });

  it("gives an absent receiver perReceiver, and stops at the limit", async () => {
    const agent = await agentWithWebhook();
    for (let i = 0; i < 4; i++) await dueRetry(agent);
    expect(await claim({ lane: "retry", perReceiver: 2, limit: 10 })).toHaveLength(2);
    expect(await claim({ lane: "retry", perReceiver: 4, limit: 1 })).toHaveLength(1);
    expect(await claim({ lane: "retry", perReceiver: 4, limit: 10 })).toHaveLength(1);
  });
});

describe("recordAttempt", () => {
  async function claimedSms() {
    const agent = await agentWithWebhook();
    const row = await smsJob(agent);
    const [job] = await claim({ lane: "first" });
    expect(job!.deliveryId).toBe(row.deliveryId);
    const attemptId = await recordAttemptStart(service.core, job!, "http://127.0.0.1:9/hook");
    return { agent, job: job!, attemptId };
  }

  it("on a 2xx completes the job and marks its event delivered by webhook", async () => {
    const { job, attemptId } = await claimedSms();
    expect(await recordAttempt(service.core, job, attemptId, { statusCode: 204, error: null, latencyMs: 7 })).toBeNull();
    expect(await deliveryRow(job.deliveryId)).toMatchObject({ status: "succeeded", attempts: 1, lastStatusCode: 204, lastError: null, claimedUntil: null });
    const event = await eventRow(job.eventSeq!);
    expect(event).toMatchObject({ status: "delivered", deliveredVia: "webhook" });
    expect(event.deliveredAt).toBeInstanceOf(Date);
    const [attempt] = await service.core.db.select().from(webhookAttempts).where(eq(webhookAttempts.attemptId, attemptId));
    expect(attempt).toMatchObject({ statusCode: 204, latencyMs: 7, error: null, attempt: 1 });
  });

  it("on a failure logs why and schedules the retry from now, with the first wait of the schedule ±20%", async () => {
    const { job, attemptId } = await claimedSms();
    const [started] = await service.core.db.select().from(webhookAttempts).where(eq(webhookAttempts.attemptId, attemptId));
    expect(started!.error).toBe(IN_FLIGHT);
    const delay = (await recordAttempt(service.core, job, attemptId, failed))!;
    expect(delay).toBeGreaterThanOrEqual(SCHEDULE[0]! * 0.8);
    expect(delay).toBeLessThanOrEqual(SCHEDULE[0]! * 1.2);
    const row = await deliveryRow(job.deliveryId);
    expect(row).toMatchObject({ status: "pending", live: false, lastStatusCode: 500, lastError: "HTTP 500", claimedUntil: null });
    expect(row.nextAttemptAt.getTime() - row.updatedAt.getTime()).toBe(delay);
    expect((await eventRow(job.eventSeq!)).status).toBe("pending");
    const [attempt] = await service.core.db.select().from(webhookAttempts).where(eq(webhookAttempts.attemptId, attemptId));
    expect(attempt).toMatchObject({ statusCode: 500, error: "HTTP 500", latencyMs: 12 });
    expect(await recordAttempt(service.core, job, attemptId, { statusCode: null, error: "timed out after 500 ms", latencyMs: 500 })).not.toBeNull();
    expect(await deliveryRow(job.deliveryId)).toMatchObject({ lastStatusCode: null, lastError: "timed out after 500 ms" });
  });

  it("jitters every wait within 0.8 to 1.2 times the schedule's", async () => {
    const { job, attemptId } = await claimedSms();
    const second = { ...job, attempts: 2 };
    const delays: number[] = [];
    for (let i = 0; i < 100; i++) delays.push((await recordAttempt(service.core, second, attemptId, failed))!);
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(SCHEDULE[1]! * 0.8);
    expect(Math.max(...delays)).toBeLessThanOrEqual(SCHEDULE[1]! * 1.2);
    expect(Math.max(...delays) - Math.min(...delays)).toBeGreaterThan(SCHEDULE[1]! * 0.2);
  });

  it("abandons the job once the schedule is spent, and returns its event to the mailbox", async () => {
    const { agent, job, attemptId } = await claimedSms();
    const last = { ...job, attempts: SCHEDULE.length + 1 };
    expect(await recordAttempt(service.core, last, attemptId, failed)).toBeNull();
    const row = await deliveryRow(job.deliveryId);
    expect(row).toMatchObject({ status: "abandoned", attempts: SCHEDULE.length + 1, lastError: "HTTP 500", claimedUntil: null });
    expect(row.completedAt).toBeInstanceOf(Date);
    expect(await eventRow(job.eventSeq!)).toMatchObject({ status: "pending", route: "mailbox" });
    const peek = await api.get("/v1/events/peek", { query: { agent_id: agent.agentId } });
    expect(peek.body.data.map((e: any) => e.payload.text)).toEqual(["hello"]);
  });

  it("moves a session start's retries out of the live lane, onto the ordinary schedule", async () => {
    const agent = await agentWithWebhook();
    const row = await enqueue(agent, { messageType: "call.session.start" });
    const [job] = await claim({ lane: "live" });
    expect(job!.deliveryId).toBe(row.deliveryId);
    const attemptId = await recordAttemptStart(service.core, job!, "http://127.0.0.1:9/hook");
    const delay = (await recordAttempt(service.core, job!, attemptId, failed))!;
    expect(delay).toBeGreaterThanOrEqual(SCHEDULE[0]! * 0.8);
    expect(await deliveryRow(row.deliveryId)).toMatchObject({ status: "pending", live: false });
  });

  it("keeps a live turn's retries in the live lane, on the live schedule", async () => {
    const agent = await agentWithWebhook();
    const row = await enqueue(agent, { liveTurnId: "turn_x" });
    const [job] = await claim({ lane: "live" });
    expect(job!.deliveryId).toBe(row.deliveryId);
    const attemptId = await recordAttemptStart(service.core, job!, "http://127.0.0.1:9/hook");
    const delay = (await recordAttempt(service.core, job!, attemptId, failed))!;
    expect(delay).toBeGreaterThanOrEqual(80);
    expect(delay).toBeLessThanOrEqual(120);
    expect(await deliveryRow(row.deliveryId)).toMatchObject({ status: "pending", live: true, turnId: "turn_x" });
  });
});

describe("abandonDelivery", () => {
  it("returns a pending event to the mailbox and leaves a delivered one alone", async () => {
    const agent = await agentWithWebhook();
    const job: DeliveryJob = await smsJob(agent, "one");
    await service.core.db.transaction((tx) => abandonDelivery(service.core, tx, job));
    expect(await deliveryRow(job.deliveryId)).toMatchObject({ status: "abandoned", claimedUntil: null });
    expect(await eventRow(job.eventSeq!)).toMatchObject({ status: "pending", route: "mailbox" });

    const other: DeliveryJob = await smsJob(agent, "two");
    await service.core.db
      .update(events)
      .set({ status: "delivered" })
      .where(and(eq(events.seq, other.eventSeq!)));
    await service.core.db.transaction((tx) => abandonDelivery(service.core, tx, other));
    expect(await eventRow(other.eventSeq!)).toMatchObject({ status: "delivered", route: "webhook" });
  });

  it("gives up an open live turn with its message, and leaves a turn already answered alone", async () => {
    const agent = await agentWithWebhook();
    const callId = await answeredCall(api, agent.agentId);
    const say = async (text: string) => (await api.post(`/v1/sandbox/calls/${callId}/say`, { text })).body.turn_id as string;
    // The caller's words open a turn; its call.utterance waits in the live lane for the runtime.
    const turnId = await say("Hello?");
    const [job] = await claim({ lane: "live" });
    expect(job).toMatchObject({ turnId, messageType: "call.utterance" });
    // The live schedule (two retries) is spent: the runtime never heard the turn, so nobody will answer it.
    const attemptId = await recordAttemptStart(service.core, job!, "http://127.0.0.1:9/hook");
    expect(await recordAttempt(service.core, { ...job!, attempts: 3 }, attemptId, failed)).toBeNull();
    const abandoned = await turnRow(turnId);
    expect(abandoned.status).toBe("abandoned");
    expect(abandoned.closedAt).toBeInstanceOf(Date);

    // A turn the runtime answered (through the context endpoint) while its message was still retried stays answered.
    const answered = await say("Are you there?");
    const [later] = await claim({ lane: "live" });
    expect(later!.turnId).toBe(answered);
    expect((await api.post(`/v1/calls/${callId}/context`, { text: "Yes, I am." }, { query: { turn_id: answered } })).status).toBe(200);
    const before = await turnRow(answered);
    expect(before.status).toBe("answered");
    await service.core.db.transaction((tx) => abandonDelivery(service.core, tx, later!));
    expect(await turnRow(answered)).toEqual(before);
  });
});

describe("testWebhook", () => {
  it("gives up waiting when no attempt is made within the timeout and two seconds", async () => {
    const agent = await agentWithWebhook();
    const started = Date.now();
    const result = await testWebhook(service.core, account.accountId, agent.agentId);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_400);
    expect(result).toMatchObject({ delivered: false, status_code: null, latency_ms: null, error: "no attempt yet; see GET /v1/webhooks/deliveries" });
    expect(result.event_id).toMatch(/^evt_/);
  });
});

describe("a session's end", () => {
  // docs/protocol-2.md, "The session, in order": call.session.end goes in the ordinary lane,
  // yet must not overtake its session's start, which goes in the live lane.
  it("waits while the session's start awaits or makes its first attempt, and goes once the start is only retried", async () => {
    const agent = await agentWithWebhook();
    await enqueue(agent, { messageType: "call.session.start" });
    const end = await enqueue(agent, { messageType: "call.session.end" });
    expect(await claim({ lane: "first" })).toEqual([]);
    const [start] = await claim({ lane: "live" });
    expect(start!.messageType).toBe("call.session.start");
    expect(await claim({ lane: "first" })).toEqual([]);
    // The start's first attempt fails: its retries are ordinary ones and hold nothing back.
    const attemptId = await recordAttemptStart(service.core, start!, "http://127.0.0.1:9/hook");
    expect(await recordAttempt(service.core, start!, attemptId, { statusCode: 503, error: null, latencyMs: 3 })).not.toBeNull();
    expect((await claim({ lane: "first" })).map((j) => j.deliveryId)).toEqual([end.deliveryId]);
  });
});

describe("abandonDelivery, announced", () => {
  it("announces the event's return to the mailbox, so a reader waiting on the agent wakes", async () => {
    const agent = await agentWithWebhook();
    await api.post("/v1/sandbox/inbound/sms", { to_number: agent.phoneNumber, from_number: "+14155550191", text: "back to the mailbox" });
    const [job] = await service.core.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.agentId, agent.agentId));
    const heard: Array<Record<string, unknown>> = [];
    const stop = service.core.bus.subscribe(EVENTS_CREATED_CHANNEL, (message) => void heard.push(message));
    try {
      await service.core.db.transaction((tx) => abandonDelivery(service.core, tx, job!));
      await expect.poll(() => heard, { timeout: 10_000 }).toContainEqual({ agent_id: agent.agentId, account_id: account.accountId });
    } finally {
      stop();
    }
  });
});
