import type { Core } from "../core.js";
import { hangupCall } from "../calls/hangup-call.js";
import { loadCallById } from "../calls/call-records.js";
import { meterCalls } from "./call-billing.js";
import { renewLeases } from "./renewals.js";

/**
 * One pass of the billing jobs: meter live calls (buy their next block of talk time, end those
 * whose money ran out, at the moment it did) and renew or release number leases.
 */
export async function runBillingJobs(core: Core): Promise<void> {
  for (const { callId, endAt } of await meterCalls(core)) {
    const call = await loadCallById(core.db, callId);
    if (call) await hangupCall(core, call, "service", endAt);
  }
  await renewLeases(core);
}

/** Runs the billing jobs every BILLING_INTERVAL_MS in this process (any number of processes may). */
export class BillingJobs {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly core: Core) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = runBillingJobs(this.core)
        .catch((error) => this.core.logger.error({ err: error }, "billing jobs failed"))
        .finally(() => (this.running = undefined));
    }, this.core.config.billingIntervalMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
