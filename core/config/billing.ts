import { z } from "zod";
import type { CarrierSettings } from "./carrier.js";
import { usd, usdToMicros } from "./values.js";

/** Call rates are per minute and billed per second, so they must come to whole micro-dollars per second. */
const perMinute = usd.refine((v) => usdToMicros(v) % 60 === 0, "must come to whole micro-dollars per second (a multiple of 0.00006)");

/** Each new account's credit when SIGNUP_CREDIT_USD is unset: play money on the sandbox, none where calls cost real money. */
const SIGNUP_CREDIT_USD: Record<CarrierSettings["CARRIER"], string> = { sandbox: "5.00", twilio: "0" };

/** Billing's settings (the rate card, in USD, and its jobs), each with its documentation (docs/configuration.md is generated from them). */
export const billingSettings = z
  .object({
    SIGNUP_CREDIT_USD: usd.optional().meta({
      defaultText: Object.entries(SIGNUP_CREDIT_USD)
        .map(([carrier, credit]) => `\`${credit}\` with \`CARRIER=${carrier}\``)
        .join(", "),
      description: "Credit given to each new account.",
    }),
    RATE_NUMBER_LOCAL_MONTHLY_USD: usd.default("1.15").meta({ description: "Monthly fee of a local number." }),
    RATE_NUMBER_TOLL_FREE_MONTHLY_USD: usd.default("2.15").meta({ description: "Monthly fee of a toll-free number." }),
    RATE_NUMBER_MOBILE_MONTHLY_USD: usd.default("1.50").meta({ description: "Monthly fee of a mobile number." }),
    RATE_CALL_INBOUND_PER_MINUTE_USD: perMinute
      .default("0.0090")
      .meta({ description: "Inbound talk time, billed per second (a multiple of 0.00006, so a second costs whole micro-dollars)." }),
    RATE_CALL_OUTBOUND_PER_MINUTE_USD: perMinute.default("0.0150").meta({ description: "Outbound talk time, likewise." }),
    RATE_SMS_INBOUND_USD: usd.default("0.0079").meta({ description: "Each received text." }),
    RATE_SMS_OUTBOUND_PER_SEGMENT_USD: usd
      .default("0.0083")
      .meta({ description: "Each part (segment) of a sent text: GSM-7 160 characters in one part or 153 per part, else 70 or 67." }),
    CALL_BILLING_BLOCK_SECONDS: z.coerce.number().int().min(1).max(3600).default(60).meta({
      description: "Talk time is prepaid this far ahead; the unused rest is refunded when the call ends.",
    }),
    NUMBER_GRACE_DAYS: z.coerce.number().int().min(0).max(90).default(7).meta({
      description: "How long a number whose renewal could not be paid is kept before it is released.",
    }),
    BILLING_INTERVAL_MS: z.coerce.number().int().min(50).max(3_600_000).default(1_000).meta({
      description: "How often the billing jobs (call metering, lease renewals) run.",
    }),
    RATE_RECORDING_PER_MINUTE_MONTH_USD: usd.default("0.0005").meta({
      description: "Storage of call recordings, per minute of audio (rounded up) per month; the first month is charged when the recording is ready.",
    }),
  })
  .meta({ title: "Billing", description: "What accounts are given and charged, in USD, and how often the billing jobs run." });

export type BillingSettings = z.output<typeof billingSettings>;

/** Billing's part of Config. */
export function billingConfig(e: BillingSettings & Pick<CarrierSettings, "CARRIER">) {
  return {
    /** Credit given to each new account, as a decimal USD string. */
    signupCreditUsd: e.SIGNUP_CREDIT_USD ?? SIGNUP_CREDIT_USD[e.CARRIER],
    /** Prices in micro-USD. */
    rates: {
      numberMonthly: {
        local: usdToMicros(e.RATE_NUMBER_LOCAL_MONTHLY_USD),
        toll_free: usdToMicros(e.RATE_NUMBER_TOLL_FREE_MONTHLY_USD),
        mobile: usdToMicros(e.RATE_NUMBER_MOBILE_MONTHLY_USD),
      },
      callPerSecond: { inbound: usdToMicros(e.RATE_CALL_INBOUND_PER_MINUTE_USD) / 60, outbound: usdToMicros(e.RATE_CALL_OUTBOUND_PER_MINUTE_USD) / 60 },
      smsInbound: usdToMicros(e.RATE_SMS_INBOUND_USD),
      recordingPerMinuteMonth: usdToMicros(e.RATE_RECORDING_PER_MINUTE_MONTH_USD),
      smsOutboundPerSegment: usdToMicros(e.RATE_SMS_OUTBOUND_PER_SEGMENT_USD),
    },
    callBillingBlockSeconds: e.CALL_BILLING_BLOCK_SECONDS,
    numberGraceDays: e.NUMBER_GRACE_DAYS,
    billingIntervalMs: e.BILLING_INTERVAL_MS,
  };
}
