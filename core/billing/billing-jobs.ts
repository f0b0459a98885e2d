import type { Core } from "../context.js";
import { meterCalls } from "./call-billing.js";
import { renewLeases } from "./renewals.js";
import { meterTransfers } from "./transfer-billing.js";

/**
 * Ends a call whose money ran out, at the moment it did. A port, filled in by the composition
 * root with the calls domain's hang-up, so billing never imports calls (which import billing).
 */
export type EndUnpaidCall = (callId: string, at: Date) => Promise<void>;

/**
 * Meters live calls (buys their next block of talk time, ends those whose money ran out) and
 * renews or releases number leases, every BILLING_INTERVAL_MS in this process (any number of
 * processes may: rows are claimed in the database).
 */
export class BillingJobs {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly core: Core,
    private readonly endUnpaidCall: EndUnpaidCall,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.runOnce()
        .catch((error) => this.core.logger.error({ err: error }, "billing jobs failed"))
        .finally(() => (this.running = undefined));
    }, this.core.config.billingIntervalMs);
    this.timer.unref();
  }

  /** One pass of the jobs, now. */
  async runOnce(): Promise<void> {
    for (const { callId, endAt } of await meterCalls(this.core)) await this.endUnpaidCall(callId, endAt);
    for (const { callId, endAt } of await meterTransfers(this.core)) await this.endUnpaidCall(callId, endAt);
    await renewLeases(this.core);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
