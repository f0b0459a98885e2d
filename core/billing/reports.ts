import { and, desc, eq, gte, inArray, isNotNull, lte, sql } from "drizzle-orm";
import type { Core } from "../context.js";
import { ledgerEntries } from "../db/schema/ledger-entries.js";
import { numbers } from "../db/schema/numbers.js";
import { type Page, toPage } from "../schemas/common.js";
import { balanceOf } from "./ledger.js";
import { CategoryTotals, numeric, sumOf } from "./ledger-sums.js";
import { formatMicros } from "./money.js";
import { monthLabel, type PeriodQuery, type ReportPeriod, resolvePeriod, withinPeriod } from "./periods.js";
import { presentRateCard } from "./rate-card.js";
import type {
  BalanceReport,
  BillingSummary,
  CallExpenditure,
  ExpenditureReport,
  MonthTotals,
  NumberExpenditure,
  PagedPeriodQuery,
  SummaryQuery,
} from "./schemas.js";

// Every figure here is computed from ledger_entries; other tables only lend descriptive fields.

/** A period as reports show it. */
export function presentPeriod(period: ReportPeriod) {
  return { start: period.start.toISOString(), end: period.end.toISOString(), label: period.label };
}

/** The balance (which always equals the sum of the ledger) and the prices in force. */
export async function getBalance(core: Core, accountId: string): Promise<BalanceReport> {
  return {
    balance: formatMicros(await balanceOf(core.db, accountId)),
    currency: "USD",
    rate_card: presentRateCard(core.config),
  };
}

/** Spend by category, and credits by category, over a period. */
export async function getExpenditure(core: Core, accountId: string, query: PeriodQuery): Promise<ExpenditureReport> {
  const period = resolvePeriod(core.now(), query);
  const rows = await core.db
    .select({ category: ledgerEntries.category, total: sumOf(ledgerEntries.amountMicros) })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.accountId, accountId), withinPeriod(ledgerEntries.createdAt, period)))
    .groupBy(ledgerEntries.category);
  const totals = new CategoryTotals(rows);
  return {
    period: presentPeriod(period),
    currency: "USD",
    total_spend: formatMicros(totals.totalSpend()),
    by_category: totals.spendByCategory(),
    credits: {
      total: formatMicros(totals.totalCredits()),
      by_category: {
        signup_credit: formatMicros(totals.credit("signup_credit")),
        operator_credit: formatMicros(totals.credit("operator_credit")),
        topup: formatMicros(totals.credit("topup")),
      },
    },
  };
}

/** Per call with any ledger row in the period: its spend and seconds there, newest first. */
export async function listCallExpenditure(core: Core, accountId: string, query: PagedPeriodQuery): Promise<Page<CallExpenditure>> {
  const period = resolvePeriod(core.now(), query);
  const firstAt = sql<Date>`min(${ledgerEntries.createdAt})`.mapWith(ledgerEntries.createdAt);
  const lastAt = sql<Date>`max(${ledgerEntries.createdAt})`.mapWith(ledgerEntries.createdAt);
  const rows = await core.db
    .select({
      callId: ledgerEntries.callId,
      // Every row of a call carries the same item (call.inbound or call.outbound).
      item: sql<string | null>`min(${ledgerEntries.item})`,
      net: sumOf(ledgerEntries.amountMicros),
      seconds: sumOf(ledgerEntries.quantity),
      firstAt,
      lastAt,
    })
    .from(ledgerEntries)
    .where(
      and(
        eq(ledgerEntries.accountId, accountId),
        eq(ledgerEntries.category, "call"),
        isNotNull(ledgerEntries.callId),
        withinPeriod(ledgerEntries.createdAt, period),
      ),
    )
    .groupBy(ledgerEntries.callId)
    .orderBy(desc(firstAt), desc(ledgerEntries.callId))
    .limit(query.limit + 1)
    .offset(query.offset);
  return toPage(rows, query, (row) => ({
    call_id: row.callId!,
    direction: row.item === "call.inbound" ? "inbound" : row.item === "call.outbound" ? "outbound" : null,
    spend: formatMicros(-row.net || 0),
    billed_seconds: row.seconds,
    first_charged_at: row.firstAt.toISOString(),
    last_charged_at: row.lastAt.toISOString(),
  }));
}

/** Per number with any ledger row in the period: its fees, months, purchases and renewals, newest first. */
export async function listNumberExpenditure(core: Core, accountId: string, query: PagedPeriodQuery): Promise<Page<NumberExpenditure>> {
  const period = resolvePeriod(core.now(), query);
  const firstAt = sql`min(${ledgerEntries.createdAt})`;
  const rows = await core.db
    .select({
      numberId: ledgerEntries.numberId,
      net: sumOf(ledgerEntries.amountMicros),
      months: sumOf(ledgerEntries.quantity),
      // FILTER has no query-builder form.
      purchases: numeric(sql`count(*) filter (where ${ledgerEntries.item} = 'number.purchase')`),
      renewals: numeric(sql`count(*) filter (where ${ledgerEntries.item} = 'number.renewal')`),
    })
    .from(ledgerEntries)
    .where(
      and(
        eq(ledgerEntries.accountId, accountId),
        eq(ledgerEntries.category, "number"),
        isNotNull(ledgerEntries.numberId),
        withinPeriod(ledgerEntries.createdAt, period),
      ),
    )
    .groupBy(ledgerEntries.numberId)
    .orderBy(desc(firstAt), desc(ledgerEntries.numberId))
    .limit(query.limit + 1)
    .offset(query.offset);
  const ids = rows.slice(0, query.limit).map((r) => r.numberId!);
  const phones = ids.length
    ? await core.db
        .select({ numberId: numbers.numberId, phoneNumber: numbers.phoneNumber })
        .from(numbers)
        .where(and(eq(numbers.accountId, accountId), inArray(numbers.numberId, ids)))
    : [];
  const phoneOf = new Map(phones.map((p) => [p.numberId, p.phoneNumber]));
  return toPage(rows, query, (row) => ({
    number_id: row.numberId!,
    phone_number: phoneOf.get(row.numberId!) ?? null,
    spend: formatMicros(-row.net || 0),
    months: row.months,
    purchases: row.purchases,
    renewals: row.renewals,
  }));
}

/** Credits, spend and net for each of the last `months` calendar months (UTC), oldest first. */
export async function getBillingSummary(core: Core, accountId: string, query: SummaryQuery): Promise<BillingSummary> {
  const now = core.now();
  const labels = Array.from({ length: query.months }, (_, i) =>
    monthLabel(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - (query.months - 1 - i), 1))),
  );
  const start = new Date(`${labels[0]}-01T00:00:00.000Z`);
  // The month is cut in UTC whatever the session's time zone; the format is inline so the
  // expression is identical in SELECT and GROUP BY.
  const month = sql<string>`to_char(${ledgerEntries.createdAt} at time zone 'UTC', 'YYYY-MM')`;
  const rows = await core.db
    .select({ month, category: ledgerEntries.category, total: sumOf(ledgerEntries.amountMicros) })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.accountId, accountId), gte(ledgerEntries.createdAt, start), lte(ledgerEntries.createdAt, now)))
    .groupBy(month, ledgerEntries.category);
  const byMonth = new Map(labels.map((label) => [label, new CategoryTotals()]));
  const all = new CategoryTotals();
  for (const row of rows) {
    byMonth.get(row.month)?.add(row.category, row.total);
    all.add(row.category, row.total);
  }
  const months: MonthTotals[] = labels.map((label) => {
    const totals = byMonth.get(label)!;
    return {
      month: label,
      credits: formatMicros(totals.totalCredits()),
      spend: formatMicros(totals.totalSpend()),
      net: formatMicros(totals.totalCredits() - totals.totalSpend()),
      by_category: totals.spendByCategory(),
    };
  });
  return { months, currency: "USD", total_spend: formatMicros(all.totalSpend()), total_credits: formatMicros(all.totalCredits()) };
}
