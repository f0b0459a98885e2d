import { eq } from "drizzle-orm";
import { formatMicros, usdToMicros } from "../core/billing/money.js";
import type { Core } from "../core/context.js";
import { numbers } from "../core/db/schema/numbers.js";
import { AppError, notFound } from "../core/errors.js";
import { countSegments } from "../core/messages/segments.js";
import type { Price } from "../discovery/operation.js";

/**
 * What each paid route costs. A payment is a deposit: it is credited to the wallet's balance,
 * and the request then spends from the balance as the rate card says (a number's month, a call's
 * seconds). So a price is what the request needs to be able to spend, and never more than a
 * cent goes unused for a read.
 */
const REQUEST_MICROS = 1_000;
/** Per-request payment for a call: five minutes of outbound talk (a top-up buys longer calls). */
const CALL_MINUTES = 5;

const rates = (context: unknown) => (context as Core).config.rates;

export const requestPrice: Price = {
  fixed: () => REQUEST_MICROS,
  description: `${formatMicros(REQUEST_MICROS)} USD a request, credited to the wallet's balance`,
  amount: () => REQUEST_MICROS,
};

export const numberPrice: Price = {
  fixed: () => null,
  variants: (context) => ({ ...rates(context).numberMonthly }),
  description: "The number's monthly fee from the rate card (local 1.15, toll_free 2.15, mobile 1.50 by default): the first 30 days",
  amount: (context, { body }) => (context as Core).config.rates.numberMonthly[(body as { number_type: "local" | "toll_free" | "mobile" }).number_type],
};

export const renewPrice: Price = {
  fixed: () => null,
  variants: (context) => ({ ...rates(context).numberMonthly }),
  description: "The number's monthly fee: 30 more days",
  async amount(context, { body }) {
    const core = context as Core;
    const numberId = (body as { number_id: string }).number_id;
    const [row] = await core.db.select({ fee: numbers.monthlyFeeMicros }).from(numbers).where(eq(numbers.numberId, numberId));
    if (!row) throw notFound("number", numberId);
    return row.fee;
  },
};

export const callPrice: Price = {
  fixed: (context) => rates(context).callPerSecond.outbound * 60 * CALL_MINUTES,
  description: `${CALL_MINUTES} minutes of outbound talk time at the rate card's per-minute rate; unused time stays on the balance`,
  amount: (context) => rates(context).callPerSecond.outbound * 60 * CALL_MINUTES,
};

/** A text: its segments at the rate card's price per segment, counted as they will be charged. */
export const textPrice: Price = {
  fixed: () => null,
  variants: (context) => ({ per_segment: rates(context).smsOutboundPerSegment }),
  description: "The text's segments at the rate card's price per segment (GSM-7: 160 characters in one, 153 per segment beyond; otherwise 70 and 67)",
  amount: (context, { body }) => countSegments((body as { text: string }).text).segments * rates(context).smsOutboundPerSegment,
};

export const topupPrice: Price = {
  fixed: () => null,
  variants: (context) => ({ min: (context as Core).config.payments.topupMinMicros, max: (context as Core).config.payments.topupMaxMicros }),
  description: "The amount asked for (query `amount`), within the top-up bounds",
  amount(context, { query }) {
    const { topupMinMicros, topupMaxMicros } = (context as Core).config.payments;
    const micros = usdToMicros((query as { amount: string }).amount);
    if (micros < topupMinMicros || micros > topupMaxMicros) {
      const message = `must be between ${formatMicros(topupMinMicros)} and ${formatMicros(topupMaxMicros)} USD`;
      throw new AppError("validation_error", `The top-up amount ${message}.`, { errors: [{ field: "amount", message }] });
    }
    return micros;
  },
};
