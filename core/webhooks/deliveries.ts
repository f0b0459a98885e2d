import { randomInt } from "node:crypto";
import { alias } from "drizzle-orm/pg-core";
import { and, asc, eq, exists, inArray, lt, lte, not, or, sql } from "drizzle-orm";
import type { Core } from "../context.js";
import type { Executor, Transaction } from "../db/database.js";
import { events } from "../db/schema/events.js";
import { EVENTS_CREATED_CHANNEL, WEBHOOKS_DUE_CHANNEL } from "../events/channels.js";
import { turns } from "../db/schema/turns.js";
import { webhookAttempts } from "../db/schema/webhook-attempts.js";
import { webhookDeliveries } from "../db/schema/webhook-deliveries.js";
import { newId } from "../ids.js";
import type { PostOutcome } from "./http-post.js";

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
    live: job.liveTurnId !== undefined,
    turnId: job.liveTurnId ?? null,
    nextAttemptAt: core.now(),
  });
  await core.bus.publish(WEBHOOKS_DUE_CHANNEL, {}, { tx });
}

/**
 * Claims due jobs for this process. A job is due when its retry time has come, or when the
 * process that claimed it has let the claim lapse (it died mid-delivery). An agent's messages
 * are first attempted one at a time, in order: a job waits while an earlier job of the same
 * agent is being sent or has not had its first attempt. Jobs waiting to retry block nothing,
 * so one failing message does not hold a live call's turns back for hours.
 */
export async function claimDueDeliveries(core: Core, limit: number): Promise<DeliveryJob[]> {
  const now = core.now();
  const d = webhookDeliveries;
  const earlier = alias(webhookDeliveries, "earlier");
  return core.db.transaction(async (tx) => {
    const blocked = exists(
      tx
        .select({ one: sql`1` })
        .from(earlier)
        .where(and(eq(earlier.agentId, d.agentId), lt(earlier.seq, d.seq), or(eq(earlier.status, "sending"), and(eq(earlier.status, "pending"), eq(earlier.attempts, 0))))),
    );
    const due = await tx
      .select({ deliveryId: d.deliveryId })
      .from(d)
      .where(and(or(and(eq(d.status, "pending"), lte(d.nextAttemptAt, now)), and(eq(d.status, "sending"), lt(d.claimedUntil, now))), not(blocked)))
      .orderBy(asc(d.seq))
      .limit(limit)
      .for("update", { skipLocked: true });
    if (due.length === 0) return [];
    return tx
      .update(d)
      .set({ status: "sending", claimedUntil: new Date(now.getTime() + core.config.webhookTimeoutMs + 5_000), updatedAt: now })
      .where(inArray(d.deliveryId, due.map((r) => r.deliveryId)))
      .returning();
  });
}

/** Wait before retry n (1-based) of a job, with ±20% jitter so retries do not arrive in waves. */
function retryDelay(core: Core, job: DeliveryJob, attempt: number): number | null {
  const schedule = job.live ? core.config.webhookLiveRetryScheduleMs : core.config.webhookRetryScheduleMs;
  const base = schedule[attempt - 1];
  return base === undefined ? null : Math.round(base * (0.8 + randomInt(0, 401) / 1000));
}

/**
 * Records one attempt and moves the job on: delivered (its event too), scheduled for a retry,
 * or, when the schedule is spent, abandoned. Returns the delay until the retry, if any.
 */
export async function recordAttempt(core: Core, job: DeliveryJob, url: string, attempt: number, outcome: PostOutcome): Promise<number | null> {
  const now = core.now();
  const succeeded = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
  const error = succeeded ? null : (outcome.error ?? `HTTP ${outcome.statusCode}`);
  return core.db.transaction(async (tx) => {
    await tx.insert(webhookAttempts).values({
      deliveryId: job.deliveryId,
      accountId: job.accountId,
      agentId: job.agentId,
      messageId: job.messageId,
      messageType: job.messageType,
      url,
      attempt,
      statusCode: outcome.statusCode,
      latencyMs: outcome.latencyMs,
      error,
      createdAt: now,
    });
    const last = { attempts: attempt, lastStatusCode: outcome.statusCode, lastError: error, updatedAt: now };
    if (succeeded) {
      await tx.update(webhookDeliveries).set({ ...last, status: "succeeded", completedAt: now, claimedUntil: null }).where(eq(webhookDeliveries.deliveryId, job.deliveryId));
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
        .set({ ...last, status: "pending", nextAttemptAt: new Date(now.getTime() + delay), claimedUntil: null })
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
  await tx.update(webhookDeliveries).set({ status: "abandoned", completedAt: now, claimedUntil: null, updatedAt: now }).where(eq(webhookDeliveries.deliveryId, job.deliveryId));
  if (job.eventSeq !== null) {
    await tx.update(events).set({ route: "mailbox" }).where(and(eq(events.seq, job.eventSeq), eq(events.status, "pending")));
    await core.bus.publish(EVENTS_CREATED_CHANNEL, { agent_id: job.agentId, account_id: job.accountId }, { tx });
  }
  if (job.turnId) {
    await tx.update(turns).set({ status: "abandoned", closedAt: now }).where(and(eq(turns.turnId, job.turnId), eq(turns.status, "open")));
  }
}
