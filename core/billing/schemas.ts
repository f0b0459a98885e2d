import { z } from "zod";
import { CALL_STATUSES } from "../calls/schemas.js";
import { LEDGER_CATEGORIES, LEDGER_ITEMS } from "../db/schema/ledger-entries.js";
import { Pagination, queryInteger, Timestamp } from "../schemas/common.js";
import { Money } from "./money.js";
import { PeriodFields } from "./periods.js";
import { RateCard } from "./rate-card.js";

const Currency = z.literal("USD");

/** What spend is split into: number fees, call time and texts. */
const SpendByCategory = z.object({
  numbers: Money.meta({ description: "Number purchases and renewals" }),
  calls: Money.meta({ description: "Call time, less refunds of unused prepaid seconds" }),
  sms: Money.meta({ description: "Received texts, and sent texts less refunds" }),
});

/** The time a report covers. */
export const ReportPeriodSchema = z
  .object({
    start: Timestamp.meta({ description: "Inclusive" }),
    end: Timestamp.meta({ description: "Exclusive for an explicit range; for a current period, now (inclusive)" }),
    label: z.string().meta({ description: "`2026-11-22`, `2026-W47`, `2026-11`, `2026`, or `<start>/<end>` for a range", example: "2026-11" }),
  })
  .meta({ id: "ReportPeriod" });

/** The query of a paged report over a period. */
export const PagedPeriodQuery = Pagination.extend(PeriodFields);
export type PagedPeriodQuery = z.infer<typeof PagedPeriodQuery>;

export const SummaryQuery = z.strictObject({
  months: queryInteger({ min: 1, max: 24, default: 6, description: "Calendar months (UTC) up to and including the current one, 1–24 (default 6)" }),
});
export type SummaryQuery = z.infer<typeof SummaryQuery>;

export const TransactionsQuery = Pagination.extend({
  ...PeriodFields,
  period: PeriodFields.period.meta({
    description: "Only rows of the current calendar period in UTC (day, week from Monday, month, year). Default: every row; not with from/to.",
  }),
  category: z.enum(LEDGER_CATEGORIES).optional().meta({ description: "Only rows of this category" }),
});
export type TransactionsQuery = z.infer<typeof TransactionsQuery>;

export const BalanceReport = z
  .object({
    balance: Money.meta({ description: "The prepaid balance: the sum of the ledger" }),
    currency: Currency,
    rate_card: RateCard,
  })
  .meta({ id: "BillingBalance" });
export type BalanceReport = z.infer<typeof BalanceReport>;

export const ExpenditureReport = z
  .object({
    period: ReportPeriodSchema,
    currency: Currency,
    total_spend: Money.meta({ description: "Debits less refunds in the period; negative only if refunds of earlier charges exceed new spend" }),
    by_category: SpendByCategory,
    credits: z.object({
      total: Money,
      by_category: z.object({ signup_credit: Money, operator_credit: Money, topup: Money }),
    }),
  })
  .meta({ id: "Expenditure" });
export type ExpenditureReport = z.infer<typeof ExpenditureReport>;

export const CallExpenditure = z
  .object({
    call_id: z.string(),
    direction: z.enum(["inbound", "outbound"]).nullable().meta({ description: "From the ledger rows' item" }),
    spend: Money.meta({ description: "What the call's rows in the period add up to (charges less refunds)" }),
    billed_seconds: z.number().int().meta({ description: "Seconds the call's rows in the period paid for, less refunded seconds" }),
    first_charged_at: Timestamp,
    last_charged_at: Timestamp,
  })
  .meta({ id: "CallExpenditure" });
export type CallExpenditure = z.infer<typeof CallExpenditure>;

export const NumberExpenditure = z
  .object({
    number_id: z.string(),
    phone_number: z.string().nullable().meta({ description: "Null when the number is not on the account" }),
    spend: Money,
    months: z.number().int().meta({ description: "Months of lease paid in the period" }),
    purchases: z.number().int(),
    renewals: z.number().int(),
  })
  .meta({ id: "NumberExpenditure" });
export type NumberExpenditure = z.infer<typeof NumberExpenditure>;

export const MonthTotals = z
  .object({
    month: z
      .string()
      .regex(/^\d{4}-\d{2}$/)
      .meta({ example: "2026-11" }),
    credits: Money,
    spend: Money,
    net: Money.meta({ description: "credits − spend: how the balance moved that month" }),
    by_category: SpendByCategory,
  })
  .meta({ id: "MonthTotals" });
export type MonthTotals = z.infer<typeof MonthTotals>;

export const BillingSummary = z
  .object({
    months: z.array(MonthTotals).meta({ description: "Oldest first, the current month last; months with no activity are zeros" }),
    currency: Currency,
    total_spend: Money,
    total_credits: Money,
  })
  .meta({ id: "BillingSummary" });
export type BillingSummary = z.infer<typeof BillingSummary>;

/** One ledger row as the API shows it. */
export const LedgerTransaction = z
  .object({
    transaction_id: z.string().meta({ example: "txn_01jdz3k7q8m9x2v4b6n8p0r2t4" }),
    amount: Money.meta({ description: "Positive for a credit or refund, negative for a charge" }),
    balance_after: Money,
    category: z.enum(LEDGER_CATEGORIES),
    item: z.enum(LEDGER_ITEMS).nullable(),
    quantity: z.number().int().meta({ description: "Seconds for a call row (negative when refunded), months for a number row, 1 per text" }),
    description: z.string(),
    call_id: z.string().nullable(),
    number_id: z.string().nullable(),
    message_id: z.string().nullable(),
    created_at: Timestamp,
  })
  .meta({ id: "LedgerTransaction" });
export type LedgerTransaction = z.infer<typeof LedgerTransaction>;

export const CallVerification = z
  .object({
    call_id: z.string(),
    status: z.enum(CALL_STATUSES),
    direction: z.enum(["inbound", "outbound"]),
    answered_at: Timestamp.nullable(),
    ended_at: Timestamp.nullable(),
    duration_seconds: z.number().int().nullable(),
    billed_seconds: z.number().int().nullable().meta({ description: "Null while the call is live" }),
    currency: Currency,
    rate_per_minute: Money,
    rate_per_second: Money,
    expected_charge: Money.nullable().meta({ description: "billed_seconds × rate once the call has ended; null while it is live" }),
    charged: Money.meta({ description: "What the call's ledger rows add up to (charges less refunds)" }),
    ledger: z
      .array(LedgerTransaction.pick({ transaction_id: true, amount: true, category: true, item: true, quantity: true, description: true, created_at: true }))
      .meta({ description: "Every ledger row of the call, oldest first" }),
    agrees: z.boolean().meta({
      description: "Ended: charged equals expected_charge and the call's own running total. Live: the running total equals the ledger so far.",
    }),
  })
  .meta({ id: "CallVerification" });
export type CallVerification = z.infer<typeof CallVerification>;

export const UsageReport = z
  .object({
    period: ReportPeriodSchema,
    calls: z.object({
      count: z.number().int().meta({ description: "Calls with charges in the period" }),
      inbound: z.number().int(),
      outbound: z.number().int(),
      billed_seconds: z.number().int(),
      billed_minutes: z.number().meta({ description: "billed_seconds / 60, to two decimals" }),
    }),
    sms: z.object({
      received: z.number().int(),
      sent_segments: z.number().int().meta({ description: "Segments of texts sent and charged (refunded ones deducted)" }),
    }),
    numbers: z.object({ purchased: z.number().int(), renewed: z.number().int() }),
  })
  .meta({ id: "Usage" });
export type UsageReport = z.infer<typeof UsageReport>;

export const VerifyCallParams = z.object({ call_id: z.string() });
