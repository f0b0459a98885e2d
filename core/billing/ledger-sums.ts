import { type SQL, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import type { LedgerCategory } from "../db/schema/ledger-entries.js";
import { formatMicros } from "./money.js";

/** Debit categories: what the account spends on. A refund is a positive row in the same category. */
export const SPEND_CATEGORIES = ["number", "call", "sms"] as const satisfies readonly LedgerCategory[];
/** Credit categories: how money reaches the account. */
export const CREDIT_CATEGORIES = ["signup_credit", "operator_credit", "topup"] as const satisfies readonly LedgerCategory[];

/** The report key of each spend category. */
const SPEND_KEYS = { number: "numbers", call: "calls", sms: "sms" } as const;

// sum() of a bigint is numeric, which both drivers hand back as a string; counts are bigints.
/** `sum(column)`, 0 when there are no rows, as a number. */
export function sumOf(column: PgColumn | SQL): SQL<number> {
  return sql<number>`coalesce(sum(${column}), 0)`.mapWith(Number);
}

/** An aggregate as a number (counts come back as bigint or string depending on the driver). */
export function numeric(expression: SQL): SQL<number> {
  return expression.mapWith(Number) as SQL<number>;
}

/** Net ledger amounts per category, in micro-USD, read as spend and credits. */
export class CategoryTotals {
  private readonly net = new Map<string, number>();

  constructor(rows: Iterable<{ category: string; total: number }> = []) {
    for (const row of rows) this.add(row.category, row.total);
  }

  add(category: string, micros: number): void {
    this.net.set(category, (this.net.get(category) ?? 0) + micros);
  }

  /** What was spent on a debit category: the negated net, so refunds reduce it. */
  spend(category: (typeof SPEND_CATEGORIES)[number]): number {
    return -(this.net.get(category) ?? 0) || 0;
  }

  credit(category: (typeof CREDIT_CATEGORIES)[number]): number {
    return this.net.get(category) ?? 0;
  }

  totalSpend(): number {
    return SPEND_CATEGORIES.reduce((sum, c) => sum + this.spend(c), 0);
  }

  totalCredits(): number {
    return CREDIT_CATEGORIES.reduce((sum, c) => sum + this.credit(c), 0);
  }

  /** `{numbers, calls, sms}` as money strings. */
  spendByCategory(): { numbers: string; calls: string; sms: string } {
    const out = { numbers: "", calls: "", sms: "" };
    for (const c of SPEND_CATEGORIES) out[SPEND_KEYS[c]] = formatMicros(this.spend(c));
    return out;
  }
}
