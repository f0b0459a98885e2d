import type { Core } from "../context.js";
import { WEBHOOKS_DUE_CHANNEL } from "../events/channels.js";
import { abandonDelivery, claimDueDeliveries, type DeliveryJob, type DeliveryLane, recordAttempt, recordAttemptStart } from "./deliveries.js";
import { isDelivered, type PostOutcome, postWebhook } from "./http-post.js";
import { ReceiverBreakers } from "./receiver-breakers.js";
import { signatureHeaders } from "./signing.js";
import { findWebhook, webhookSecret } from "./webhooks.js";

// How many deliveries one process may have in flight in each lane. An open request to a hanging
// receiver costs a socket and a timer, so the caps are generous: what keeps one receiver from
// taking them all is the per-receiver cap and the breaker, not these.
const LANE_CAPS: Record<DeliveryLane, number> = { live: 128, first: 256, retry: 64 };
const LANES = Object.keys(LANE_CAPS) as DeliveryLane[];
// Catches jobs whose retry time has come and claims that lapsed in a process that died.
const SWEEP_MS = 1_000;
const SHUTDOWN_WAIT_MS = 3_000;

/**
 * Delivers webhook jobs. Every process runs one; jobs are claimed in the database, so each is
 * sent by one process at a time, and a job abandoned by a dead process is claimed again.
 * Deliveries run in three lanes with their own room (live turns, first attempts, retries); each
 * receiver has at most WEBHOOK_RECEIVER_CONCURRENCY deliveries in flight per lane, and one that
 * keeps timing out is left alone for a while (receiver-breakers.ts). So a tenant whose receiver
 * hangs delays nobody else's deliveries.
 */
export class DeliveryWorker {
  private readonly inFlight = new Map<DeliveryLane, Map<Promise<void>, string>>(LANES.map((lane) => [lane, new Map()]));
  private readonly breakers: ReceiverBreakers;
  private claiming = false;
  private again = false;
  private closed = false;
  private sweep: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly retryTimers = new Set<NodeJS.Timeout>();

  constructor(private readonly core: Core) {
    this.breakers = new ReceiverBreakers(core.now.bind(core));
  }

  start(): void {
    const off = [this.core.bus.subscribe(WEBHOOKS_DUE_CHANNEL, () => this.kick()), this.core.bus.onReconnect(() => this.kick())];
    this.unsubscribe = () => off.forEach((stop) => stop());
    this.sweep = setInterval(() => this.kick(), SWEEP_MS);
    this.sweep.unref();
    this.kick();
  }

  /** Claims and starts as many due jobs as there is room for. */
  kick(): void {
    if (this.closed) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = true;
    void this.claimLoop();
  }

  private async claimLoop(): Promise<void> {
    try {
      do {
        this.again = false;
        for (const lane of LANES) {
          if ((await this.claimLane(lane)) && !this.closed) this.again = true;
        }
      } while (this.again && !this.closed);
    } catch (error) {
      if (!this.closed) this.core.logger.error({ err: error }, "claiming webhook jobs failed");
    } finally {
      this.claiming = false;
    }
  }

  /** Claims one lane's due jobs; true when it filled the room (there may be more). */
  private async claimLane(lane: DeliveryLane): Promise<boolean> {
    const running = this.inFlight.get(lane)!;
    const room = LANE_CAPS[lane] - running.size;
    if (room <= 0) return false;
    const perReceiver = this.core.config.webhookReceiverConcurrency;
    const used = new Map<string, number>();
    for (const webhookId of running.values()) used.set(webhookId, (used.get(webhookId) ?? 0) + 1);
    const receiverRoom = new Map<string, number>();
    const skipWebhooks: string[] = [];
    for (const [webhookId, count] of used) receiverRoom.set(webhookId, perReceiver - count);
    // A live turn is tried whatever the breaker says: a caller is waiting, and it gives up fast.
    if (lane !== "live") {
      for (const [webhookId, allowed] of this.breakers.limits())
        receiverRoom.set(webhookId, Math.min(receiverRoom.get(webhookId) ?? perReceiver, allowed - (used.get(webhookId) ?? 0)));
    }
    for (const [webhookId, left] of receiverRoom) if (left <= 0) skipWebhooks.push(webhookId);
    const jobs = await claimDueDeliveries(this.core, { lane, limit: room, skipWebhooks, receiverRoom, perReceiver });
    for (const job of jobs) {
      const delivery: Promise<void> = this.deliver(job, lane)
        .catch((error) => this.core.logger.error({ err: error, delivery_id: job.deliveryId }, "webhook delivery failed"))
        .finally(() => {
          running.delete(delivery);
          this.kick();
        });
      running.set(delivery, job.webhookId);
    }
    return jobs.length === room;
  }

  private async deliver(job: DeliveryJob, lane: DeliveryLane): Promise<void> {
    const { core } = this;
    const webhook = await findWebhook(core.db, job.agentId);
    if (!webhook) {
      // The webhook was deleted while the message waited: it goes back to the mailbox.
      await core.db.transaction((tx) => abandonDelivery(core, tx, job));
      return;
    }
    const body = JSON.stringify(job.body);
    // Logged before it is sent: if this process dies now, the log still has this attempt.
    const attemptId = await recordAttemptStart(core, job, webhook.url);
    const outcome = await postWebhook({
      url: webhook.url,
      body,
      timeoutMs: core.config.webhookTimeoutMs,
      allowPrivate: core.config.allowPrivateWebhooks,
      headers: {
        "content-type": "application/json",
        "user-agent": "agentline-webhooks/1",
        "x-service-event": job.messageType,
        "x-service-event-id": job.messageId,
        "x-service-delivery-attempt": String(job.attempts),
        ...signatureHeaders({
          secret: webhookSecret(core, webhook),
          signatureHeader: webhook.signatureHeader,
          messageId: job.messageId,
          body,
          timestamp: core.now(),
        }),
      },
    });
    if (lane !== "live") this.breakers.record(job.webhookId, answered(outcome));
    const retryIn = await recordAttempt(core, job, attemptId, outcome);
    core.metrics.webhookDeliveries.inc({ outcome: isDelivered(outcome.statusCode) ? "succeeded" : "failed" });
    if (retryIn !== null) this.wakeAfter(retryIn);
  }

  private wakeAfter(ms: number): void {
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      this.kick();
    }, ms + 5);
    timer.unref();
    this.retryTimers.add(timer);
  }

  /** Stops claiming; waits briefly for deliveries in flight (an unfinished one is claimed again later). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweep);
    this.unsubscribe?.();
    for (const timer of this.retryTimers) clearTimeout(timer);
    const all = [...this.inFlight.values()].flatMap((running) => [...running.keys()]);
    await Promise.race([Promise.allSettled(all), new Promise((r) => setTimeout(r, SHUTDOWN_WAIT_MS).unref())]);
  }
}

/** The receiver answered at all (any status): what the breaker counts is silence. */
function answered(outcome: PostOutcome): boolean {
  return outcome.statusCode !== null;
}
