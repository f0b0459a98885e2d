import { z } from "zod";
import { flag, schedule } from "./values.js";

/** The webhooks' settings, each with its documentation (docs/configuration.md is generated from them). */
export const webhookSettings = z
  .object({
    ALLOW_PRIVATE_WEBHOOKS: flag.prefault("0").meta({
      description:
        "`1` lets webhooks target private, loopback and link-local addresses (development and tests), and lets OAuth client ID metadata documents come from loopback (https, certificate unchecked).",
    }),
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000).meta({ description: "How long a webhook may take to answer." }),
    // Svix's schedule: eight attempts over about 27 hours.
    WEBHOOK_RETRY_SCHEDULE: schedule.prefault(["5s", "5m", "30m", "2h", "5h", "10h", "10h"].join(",")).meta({
      description: "Waits before each retry of a webhook delivery (units `ms`, `s`, `m`, `h`); ±20% jitter.",
    }),
    WEBHOOK_LIVE_RETRY_SCHEDULE: schedule.prefault("250ms,1s").meta({ description: "The same for live-turn messages, after which the turn is given up." }),
    WEBHOOK_RECEIVER_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(4).meta({
      description: "Most deliveries one receiver (an agent's webhook) has in flight per lane (live turns, first attempts, retries) in one process.",
    }),
  })
  .meta({ title: "Webhooks", description: "Where webhooks may go, how long they may take, and when they are tried again." });

export type WebhookSettings = z.output<typeof webhookSettings>;

/** The webhooks' part of Config. */
export function webhookConfig(e: WebhookSettings) {
  return {
    allowPrivateWebhooks: e.ALLOW_PRIVATE_WEBHOOKS,
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    /** Waits before each retry of a webhook delivery; its length is the number of retries. */
    webhookRetryScheduleMs: e.WEBHOOK_RETRY_SCHEDULE,
    /** The same for live-turn messages: a few fast retries, then the turn is given up. */
    webhookLiveRetryScheduleMs: e.WEBHOOK_LIVE_RETRY_SCHEDULE,
    webhookReceiverConcurrency: e.WEBHOOK_RECEIVER_CONCURRENCY,
  };
}
