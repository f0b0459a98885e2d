import { z } from "zod";
import type { Config } from "../config.js";
import { formatMicros, Money } from "./money.js";

export const RateCard = z
  .object({
    currency: z.literal("USD"),
    numbers: z.object({
      local: z.object({ monthly: Money }),
      toll_free: z.object({ monthly: Money }),
      mobile: z.object({ monthly: Money }),
    }),
    calls: z.object({
      inbound_per_minute: Money,
      outbound_per_minute: Money,
      billing_increment_seconds: z.literal(1),
      prepaid_block_seconds: z.number().int().meta({ description: "Talk time is paid a block ahead; unused seconds are refunded when the call ends" }),
      minimum_balance_to_call: z.object({ inbound: Money, outbound: Money }).meta({ description: "A call needs its first minute covered" }),
      transfer_per_minute: Money.meta({
        description:
          "A transferred call's bridged leg (the person it was handed to), billed per second beside the call's own talk time: the outbound rate; a transfer needs its first minute covered",
      }),
    }),
    sms: z.object({
      inbound_per_message: Money,
      outbound_per_segment: Money.meta({ description: "Charged when a text is sent, per part; refunded if the carrier refuses it at once" }),
    }),
    recordings: z
      .object({ per_minute_month: Money })
      .meta({ description: "Recording storage, per minute of audio (rounded up) per month; the first month is charged when the recording is ready" }),
  })
  .meta({ id: "RateCard" });
export type RateCard = z.infer<typeof RateCard>;

/** The prices the service charges, as the API shows them. */
export function presentRateCard(config: Pick<Config, "rates" | "callBillingBlockSeconds">): RateCard {
  const { rates } = config;
  return {
    currency: "USD",
    numbers: {
      local: { monthly: formatMicros(rates.numberMonthly.local) },
      toll_free: { monthly: formatMicros(rates.numberMonthly.toll_free) },
      mobile: { monthly: formatMicros(rates.numberMonthly.mobile) },
    },
    calls: {
      inbound_per_minute: formatMicros(rates.callPerSecond.inbound * 60),
      outbound_per_minute: formatMicros(rates.callPerSecond.outbound * 60),
      billing_increment_seconds: 1,
      prepaid_block_seconds: config.callBillingBlockSeconds,
      minimum_balance_to_call: { inbound: formatMicros(rates.callPerSecond.inbound * 60), outbound: formatMicros(rates.callPerSecond.outbound * 60) },
      transfer_per_minute: formatMicros(rates.callPerSecond.outbound * 60),
    },
    sms: { inbound_per_message: formatMicros(rates.smsInbound), outbound_per_segment: formatMicros(rates.smsOutboundPerSegment) },
    recordings: { per_minute_month: formatMicros(rates.recordingPerMinuteMonth) },
  };
}
