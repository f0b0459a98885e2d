import type { Core } from "../context.js";
import { WEBHOOKS_DUE_CHANNEL } from "../events/channels.js";
import { abandonDelivery, claimDueDeliveries, recordAttempt, type DeliveryJob } from "./deliveries.js";
import { postWebhook } from "./http-post.js";
import { signatureHeaders } from "./signing.js";
import { findWebhook, webhookSecret } from "./webhooks.js";

const MAX_IN_FLIGHT = 32;
// Catches jobs whose retry time has come and claims that lapsed in a process that died.
const SWEEP_MS = 1_000;
const SHUTDOWN_WAIT_MS = 3_000;

/**
 * Delivers webhook jobs. Every process runs one; jobs are claimed in the database, so each is
 * sent by one process at a time, and a job abandoned by a dead process is claimed again.
 */
export class DeliveryWorker {
  private readonly inFlight = new Set<Promise<void>>();
  private claiming = false;
  private again = false;
  private closed = false;
  private sweep: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly retryTimers = new Set<NodeJS.Timeout>();

  constructor(private readonly core: Core) {}

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
        const room = MAX_IN_FLIGHT - this.inFlight.size;
        if (room <= 0) break;
        const jobs = await claimDueDeliveries(this.core, room);
        for (const job of jobs) {
          const running: Promise<void> = this.deliver(job)
            .catch((error) => this.core.logger.error({ err: error, delivery_id: job.deliveryId }, "webhook delivery failed"))
            .finally(() => {
              this.inFlight.delete(running);
              this.kick();
            });
          this.inFlight.add(running);
        }
        if (jobs.length === room) this.again = true;
      } while (this.again && !this.closed);
    } catch (error) {
      if (!this.closed) this.core.logger.error({ err: error }, "claiming webhook jobs failed");
    } finally {
      this.claiming = false;
    }
  }

  private async deliver(job: DeliveryJob): Promise<void> {
    const { core } = this;
    const webhook = await findWebhook(core.db, job.agentId);
    if (!webhook) {
      // The webhook was deleted while the message waited: it goes back to the mailbox.
      await core.db.transaction((tx) => abandonDelivery(core, tx, job));
      return;
    }
    const body = JSON.stringify(job.body);
    const attempt = job.attempts + 1;
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
        "x-service-delivery-attempt": String(attempt),
        ...signatureHeaders({ secret: webhookSecret(core, webhook), signatureHeader: webhook.signatureHeader, messageId: job.messageId, body, timestamp: core.now() }),
      },
    });
    const retryIn = await recordAttempt(core, job, webhook.url, attempt, outcome);
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
    await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((r) => setTimeout(r, SHUTDOWN_WAIT_MS).unref())]);
  }
}
