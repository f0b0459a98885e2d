import { randomInt } from "node:crypto";
import { and, asc, eq, exists, gt, inArray, lt, lte, not, notInArray, or, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Core } from "../context.js";
import type { Executor, Transaction } from "../db/database.js";
import { events } from "../db/schema/events.js";
import { turns } from "../db/schema/turns.js";
import { webhookAttempts } from "../db/schema/webhook-attempts.js";
import { webhookDeliveries } from "../db/schema/webhook-deliveries.js";
import { EVENTS_CREATED_CHANNEL, WEBHOOKS_DUE_CHANNEL } from "../events/channels.js";
import { newId } from "../ids.js";
import { isDelivered, type PostOutcome } from "./http-post.js";

export type DeliveryJob = typeof webhookDeliveries.$inferSelect;

/** Queues a message for the agent's webhook, in the caller's transaction. */
export async function enqueueDelivery(
  core: Core,
  tx: Executor,
  job: {
    accountId: string;
    agentId: string;
    webhookId: string;
    eventSeq: number | null;
    messageId: string;
    messageType: string;
    body: Record<string, unknown>;
    liveTurnId?: string | undefined;
  },
): Promise<void> {
  await tx.insert(webhookDeliveries).values({
    deliveryId: newId("whd"),
    accountId: job.accountId,
    agentId: job.agentId,
    webhookId: job.webhookId,
    eventSeq: job.eventSeq,
    messageId: job.messageId,
    messageType: job.messageType,
    body: job.body,
    live: job.liveTurnId !== undefined || job.messageType === SESSION_START,
    turnId: job.liveTurnId ?? null,
    nextAttemptAt: core.now(),
  });
  await core.bus.publish(WEBHOOKS_DUE_CHANNEL, {}, { tx });
}

// A protocol-2 session opens with call.session.start, and its tasks must not overtake it
// (docs/protocol-2.md, "The session, in order"). So its first attempt goes in the live lane,
// where an agent's messages are first attempted one at a time in order: the session's tasks wait
// for it there, and it never waits behind the agent's ordinary events (a live turn would wait
// with it). Its retries leave the live lane and follow the ordinary schedule (recordAttempt).
const SESSION_START = "call.session.start";
// A session ends after its tasks: call.session.end (ordinary lane) waits while an earlier live
// message of the agent awaits or makes its first attempt. Ordinary events never hold live ones.
const SESSION_END = "call.session.end";

/**
 * The lanes deliveries are claimed in, each with its own room, so one kind of work never waits
 * for another: live-turn messages (a caller is waiting), first attempts, and retries (which go
 * to receivers already known to be failing).
 */
export type DeliveryLane = "live" | "first" | "retry";

export interface ClaimOptions {
  lane: DeliveryLane;
  /** How many jobs this process has room for in the lane. */
  limit: number;
  /** Receivers (webhook ids) to leave alone: at their concurrency cap, or their breaker open. */
  skipWebhooks: string[];
  /** How many more deliveries each receiver may have in flight; absent ones may have `perReceiver`. */
  receiverRoom: Map<string, number>;
  perReceiver: number;
}

/**
 * Claims due jobs of one lane for this process, and counts the attempt at once: a job claimed
 * again after its process died is sent as the next attempt (X-Service-Delivery-Attempt n+1).
 * A job is due when its retry time has come, or when the process that claimed it let the claim
 * lapse. An agent's messages are first attempted one at a time, in order, within their lane: a
 * job waits while an earlier job of the same agent and lane awaits or makes its first attempt.
 * Retries, waiting or in flight, hold nothing back, and no receiver gets more than
 * its room.
 */
export async function claimDueDeliveries(core: Core, options: ClaimOptions): Promise<DeliveryJob[]> {
  const now = core.now();
  const d = webhookDeliveries;
  const earlier = alias(webhookDeliveries, "earlier");
  const live = options.lane === "live";
  return core.db.transaction(async (tx) => {
    const firstInFlight = or(and(eq(earlier.status, "pending"), eq(earlier.attempts, 0)), and(eq(earlier.status, "sending"), eq(earlier.attempts, 1)));
    const blocked = exists(
      tx
        .select({ one: sql`1` })
        .from(earlier)
        .where(
          and(
            eq(earlier.agentId, d.agentId),
            or(eq(earlier.live, d.live), and(eq(d.messageType, SESSION_END), eq(earlier.live, true))),
            lt(earlier.seq, d.seq),
            firstInFlight,
          ),
        ),
    );
    const due = or(and(eq(d.status, "pending"), lte(d.nextAttemptAt, now)), and(eq(d.status, "sending"), lt(d.claimedUntil, now)));
    const inLane = live ? eq(d.live, true) : options.lane === "first" ? and(eq(d.live, false), eq(d.attempts, 0)) : and(eq(d.live, false), gt(d.attempts, 0));
    const where = and(due, inLane, options.skipWebhooks.length > 0 ? notInArray(d.webhookId, options.skipWebhooks) : undefined);
    // At most perReceiver candidates per receiver, so one receiver's backlog cannot crowd the
    // others out of the limit (a window function cannot sit beside FOR UPDATE: a subquery).
    const ranked = tx
      .select({ id: d.deliveryId, rank: sql<number>`row_number() over (partition by ${d.webhookId} order by ${d.seq})`.as("rank") })
      .from(d)
      .where(where)
      .as("ranked");
    const candidates = await tx
      .select({ deliveryId: d.deliveryId, webhookId: d.webhookId })
      .from(d)
      .where(and(where, not(blocked), inArray(d.deliveryId, tx.select({ id: ranked.id }).from(ranked).where(lte(ranked.rank, options.perReceiver)))))
      .orderBy(asc(d.seq))
      .limit(options.limit)
      .for("update", { skipLocked: true });
    const room = new Map(options.receiverRoom);
    const chosen = candidates.filter((c) => {
      const left = room.get(c.webhookId) ?? options.perReceiver;
      room.set(c.webhookId, left - 1);
      return left > 0;
    });
    if (chosen.length === 0) return [];
    const ids = chosen.map((r) => r.deliveryId);
    // An attempt whose process died before it learned the answer stays in the log as such.
    await tx
      .update(webhookAttempts)
      .set({ error: INTERRUPTED })
      .where(and(inArray(webhookAttempts.deliveryId, ids), eq(webhookAttempts.error, IN_FLIGHT)));
    return tx
      .update(d)
      .set({
        status: "sending",
        attempts: sql`${d.attempts} + 1`,
        claimedUntil: new Date(now.getTime() + core.config.webhookTimeoutMs + 5_000),
        updatedAt: now,
      })
      .where(inArray(d.deliveryId, ids))
      .returning();
  });
}

/** The error of an attempt on its way: recorded before the POST, replaced by its outcome. */
export const IN_FLIGHT = "in flight: no answer yet";
const INTERRUPTED = "no answer recorded: the delivering process stopped during this attempt";

/** Logs an attempt before it is sent, so a crash cannot hide it; returns its id for the outcome. */
export async function recordAttemptStart(core: Core, job: DeliveryJob, url: string): Promise<number> {
  const [row] = await core.db
    .insert(webhookAttempts)
    .values({
      deliveryId: job.deliveryId,
      accountId: job.accountId,
      agentId: job.agentId,
      messageId: job.messageId,
      messageType: job.messageType,
      url,
      attempt: job.attempts,
      statusCode: null,
      latencyMs: 0,
      error: IN_FLIGHT,
      createdAt: core.now(),
    })
    .returning({ attemptId: webhookAttempts.attemptId });
  return row!.attemptId;
}

/**
 * Wait before retry n (1-based) of a job, with ±20% jitter so retries do not arrive in waves.
 * A live turn's message has the live schedule (a caller is waiting; then the turn is given up);
 * everything else, a session start included, the ordinary one.
 */
function retryDelay(core: Core, job: DeliveryJob, attempt: number): number | null {
  const schedule = job.turnId !== null ? core.config.webhookLiveRetryScheduleMs : core.config.webhookRetryScheduleMs;
  const base = schedule[attempt - 1];
  return base === undefined ? null : Math.round(base * (0.8 + randomInt(0, 401) / 1000));
}

/**
 * Records one attempt's outcome (its row was written when it started) and moves the job on:
 * delivered (its event too), scheduled for a retry, or, when the schedule is spent, abandoned.
 * Returns the delay until the retry, if any.
 */
export async function recordAttempt(core: Core, job: DeliveryJob, attemptId: number, outcome: PostOutcome): Promise<number | null> {
  const now = core.now();
  const attempt = job.attempts;
  const succeeded = isDelivered(outcome.statusCode);
  const error = succeeded ? null : (outcome.error ?? `HTTP ${outcome.statusCode}`);
  return core.db.transaction(async (tx) => {
    await tx
      .update(webhookAttempts)
      .set({ statusCode: outcome.statusCode, latencyMs: outcome.latencyMs, error })
      .where(eq(webhookAttempts.attemptId, attemptId));
    const last = { attempts: attempt, lastStatusCode: outcome.statusCode, lastError: error, updatedAt: now };
    if (succeeded) {
      await tx
        .update(webhookDeliveries)
        .set({ ...last, status: "succeeded", completedAt: now, claimedUntil: null })
        .where(eq(webhookDeliveries.deliveryId, job.deliveryId));
      if (job.eventSeq !== null) {
        await tx
          .update(events)
          .set({ status: "delivered", deliveredVia: "webhook", deliveredAt: now })
          .where(and(eq(events.seq, job.eventSeq), eq(events.status, "pending")));
      }
      return null;
    }
    const delay = retryDelay(core, job, attempt);
    if (delay !== null) {
      await tx
        .update(webhookDeliveries)
        // Only a live turn's message retries in the live lane; a session start's retries are
        // ordinary ones (retry lane, breaker), and no longer hold its session's tasks.
        .set({ ...last, status: "pending", nextAttemptAt: new Date(now.getTime() + delay), claimedUntil: null, live: job.turnId !== null })
        .where(eq(webhookDeliveries.deliveryId, job.deliveryId));
      return delay;
    }
    await tx.update(webhookDeliveries).set(last).where(eq(webhookDeliveries.deliveryId, job.deliveryId));
    await abandonDelivery(core, tx, job);
    return null;
  });
}

/**
 * Gives a job up. Nothing is lost: its event returns to the mailbox (and to a relay socket, if
 * one connects). A live turn that could not reach the runtime is abandoned with it.
 */
export async function abandonDelivery(core: Core, tx: Transaction, job: DeliveryJob): Promise<void> {
  const now = core.now();
  await tx
    .update(webhookDeliveries)
    .set({ status: "abandoned", completedAt: now, claimedUntil: null, updatedAt: now })
    .where(eq(webhookDeliveries.deliveryId, job.deliveryId));
  if (job.eventSeq !== null) {
    await tx
      .update(events)
      .set({ route: "mailbox" })
      .where(and(eq(events.seq, job.eventSeq), eq(events.status, "pending")));
    await core.bus.publish(EVENTS_CREATED_CHANNEL, { agent_id: job.agentId, account_id: job.accountId }, { tx });
  }
  if (job.turnId) {
    await tx
      .update(turns)
      .set({ status: "abandoned", closedAt: now })
      .where(and(eq(turns.turnId, job.turnId), eq(turns.status, "open")));
  }
}
