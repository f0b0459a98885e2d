import { eq } from "drizzle-orm";
import { credit, type LedgerLine, tryCharge } from "../../core/billing/ledger.js";
import { formatMicros } from "../../core/billing/money.js";
import type { Core } from "../../core/context.js";
import { type LedgerCategory, ledgerEntries } from "../../core/db/schema/ledger-entries.js";

export type LedgerRow = typeof ledgerEntries.$inferSelect;
type Line = Omit<LedgerLine, "accountId" | "description" | "at"> & { description?: string };

/**
 * Writes an account's ledger through the ledger's own functions (credit and tryCharge), so the
 * rows and the balance are exactly what charging code would leave, stamped at the moment given.
 */
export function ledgerOf(core: Pick<Core, "db">, accountId: string) {
  return {
    async credit(category: "signup_credit" | "operator_credit" | "topup", micros: number, at: string): Promise<string> {
      return (await credit(core.db, { accountId, category, description: `test ${category}`, at: new Date(at) }, micros)).transactionId;
    },
    async charge(line: Line, micros: number, at: string): Promise<string> {
      const done = await tryCharge(core.db, { accountId, description: `test ${line.category}`, ...line, at: new Date(at) }, micros);
      if (!done) throw new Error(`seed charge of ${micros} refused: balance too low`);
      return done.transactionId;
    },
    /** A refund of call time: a positive row in the call's category, with negative seconds. */
    async refund(line: Line, micros: number, at: string): Promise<string> {
      return (await credit(core.db, { accountId, description: `test refund`, ...line, at: new Date(at) }, micros)).transactionId;
    },
    rows(): Promise<LedgerRow[]> {
      return core.db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, accountId));
    },
  };
}

/** Rows stamped in [start, end), or [start, end] when endInclusive (a current period). */
export function within(rows: LedgerRow[], start: string | Date, end: string | Date, endInclusive = false): LedgerRow[] {
  const s = new Date(start).getTime();
  const e = new Date(end).getTime();
  return rows.filter((r) => r.createdAt.getTime() >= s && (endInclusive ? r.createdAt.getTime() <= e : r.createdAt.getTime() < e));
}

export const sumAmounts = (rows: LedgerRow[]) => rows.reduce((sum, r) => sum + r.amountMicros, 0);
export const sumQuantity = (rows: LedgerRow[]) => rows.reduce((sum, r) => sum + r.quantity, 0);
export const ofCategory = (rows: LedgerRow[], category: LedgerCategory) => rows.filter((r) => r.category === category);
/** Money as the API writes it; spend is the negated net of debits (so -0 must read as 0). */
export const money = (micros: number) => formatMicros(micros || 0);
const spend = (rows: LedgerRow[], category: LedgerCategory) => -sumAmounts(ofCategory(rows, category));

/** What /v1/billing/expenditure should say, computed from raw ledger rows already cut to the period. */
export function expenditureOf(rows: LedgerRow[]) {
  const credits = ["signup_credit", "operator_credit", "topup"] as const;
  return {
    total_spend: money(spend(rows, "number") + spend(rows, "call") + spend(rows, "sms")),
    by_category: { numbers: money(spend(rows, "number")), calls: money(spend(rows, "call")), sms: money(spend(rows, "sms")) },
    credits: {
      total: money(credits.reduce((sum, c) => sum + sumAmounts(ofCategory(rows, c)), 0)),
      by_category: Object.fromEntries(credits.map((c) => [c, money(sumAmounts(ofCategory(rows, c)))])),
    },
  };
}
