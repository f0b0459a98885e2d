import { and, desc, eq, type SQL, sql } from "drizzle-orm";
import type { Core } from "../context.js";
import { ledgerEntries } from "../db/schema/ledger-entries.js";
import { type Page, toPage } from "../schemas/common.js";
import { numeric } from "./ledger-sums.js";
import { formatMicros } from "./money.js";
import { type PeriodQuery, resolveOptionalPeriod, resolvePeriod, withinPeriod } from "./periods.js";
import { presentPeriod } from "./reports.js";
import type { LedgerTransaction, TransactionsQuery, UsageReport } from "./schemas.js";

type LedgerRow = typeof ledgerEntries.$inferSelect;

/** A ledger row as the API shows it. */
export function presentTransaction(row: LedgerRow): LedgerTransaction {
  return {
    transaction_id: row.transactionId,
    amount: formatMicros(row.amountMicros),
    balance_after: formatMicros(row.balanceAfterMicros),
    category: row.category,
    item: row.item,
    quantity: row.quantity,
    description: row.description,
    call_id: row.callId,
    number_id: row.numberId,
    message_id: row.messageId,
    created_at: row.createdAt.toISOString(),
  };
}

/**
 * What the account used in a period, counted from its ledger rows: calls (distinct calls with
 * charges, and the seconds paid, refunds deducted), texts received, segments of texts sent
 * (refunds deducted), numbers bought and renewed.
 */
export async function getUsage(core: Core, accountId: string, query: PeriodQuery): Promise<UsageReport> {
  const period = resolvePeriod(core.now(), query);
  const { callId, category, item, quantity } = ledgerEntries;
  // Conditional aggregates (FILTER) have no query-builder form; one statement keeps the figures
  // consistent with each other.
  const [row] = await core.db
    .select({
      calls: numeric(sql`count(distinct ${callId}) filter (where ${category} = 'call')`),
      inbound: numeric(sql`count(distinct ${callId}) filter (where ${item} = 'call.inbound')`),
      outbound: numeric(sql`count(distinct ${callId}) filter (where ${item} = 'call.outbound')`),
      seconds: numeric(sql`coalesce(sum(${quantity}) filter (where ${category} = 'call'), 0)`),
      texts: numeric(sql`coalesce(sum(${quantity}) filter (where ${item} = 'sms.inbound'), 0)`),
      segments: numeric(sql`coalesce(sum(${quantity}) filter (where ${item} = 'sms.outbound'), 0)`),
      purchased: numeric(sql`count(*) filter (where ${item} = 'number.purchase')`),
      renewed: numeric(sql`count(*) filter (where ${item} = 'number.renewal')`),
    })
    .from(ledgerEntries)
    .where(and(eq(ledgerEntries.accountId, accountId), withinPeriod(ledgerEntries.createdAt, period)));
  const r = row!;
  return {
    period: presentPeriod(period),
    calls: { count: r.calls, inbound: r.inbound, outbound: r.outbound, billed_seconds: r.seconds, billed_minutes: Math.round((r.seconds / 60) * 100) / 100 },
    sms: { received: r.texts, sent_segments: r.segments },
    numbers: { purchased: r.purchased, renewed: r.renewed },
  };
}

/** The ledger, newest first, optionally limited to a period and a category. */
export async function listTransactions(core: Core, accountId: string, query: TransactionsQuery): Promise<Page<LedgerTransaction>> {
  const period = resolveOptionalPeriod(core.now(), query);
  const filters: SQL[] = [eq(ledgerEntries.accountId, accountId)];
  if (period) filters.push(withinPeriod(ledgerEntries.createdAt, period));
  if (query.category) filters.push(eq(ledgerEntries.category, query.category));
  const rows = await core.db
    .select()
    .from(ledgerEntries)
    .where(and(...filters))
    .orderBy(desc(ledgerEntries.createdAt), desc(ledgerEntries.transactionId))
    .limit(query.limit + 1)
    .offset(query.offset);
  return toPage(rows, query, presentTransaction);
}
