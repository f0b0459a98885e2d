import { and, eq, gte, sql } from "drizzle-orm";
import type { Executor } from "../db/database.js";
import { accounts } from "../db/schema/accounts.js";
import { type LedgerCategory, type LedgerItem, ledgerEntries } from "../db/schema/ledger-entries.js";
import { AppError } from "../errors.js";
import { newId } from "../ids.js";
import { formatMicros } from "./money.js";

export interface LedgerLine {
  accountId: string;
  category: LedgerCategory;
  item?: LedgerItem | null;
  description: string;
  callId?: string | null;
  numberId?: string | null;
  messageId?: string | null;
  quantity?: number;
  at: Date;
}

async function append(tx: Executor, line: LedgerLine, amountMicros: number, balanceAfterMicros: number): Promise<string> {
  const transactionId = newId("txn");
  await tx.insert(ledgerEntries).values({
    transactionId,
    accountId: line.accountId,
    amountMicros,
    balanceAfterMicros,
    category: line.category,
    item: line.item ?? null,
    description: line.description,
    callId: line.callId ?? null,
    numberId: line.numberId ?? null,
    messageId: line.messageId ?? null,
    quantity: line.quantity ?? 0,
    createdAt: line.at,
  });
  return transactionId;
}

/** Adds money to an account: the balance and its ledger row change together. */
export async function credit(tx: Executor, line: LedgerLine, micros: number): Promise<{ transactionId: string; balanceMicros: number }> {
  if (!Number.isSafeInteger(micros) || micros < 0) throw new Error(`credit of ${micros} micros`);
  const [row] = await tx
    .update(accounts)
    .set({ balanceMicros: sql`${accounts.balanceMicros} + ${micros}` })
    .where(eq(accounts.accountId, line.accountId))
    .returning({ balance: accounts.balanceMicros });
  if (!row) throw new Error(`no account ${line.accountId}`);
  return { transactionId: await append(tx, line, micros, row.balance), balanceMicros: row.balance };
}

/**
 * Takes money from an account if, and only if, the balance covers it: one conditional update,
 * so concurrent charges in any process can neither spend the same money twice nor go below zero.
 * Returns null when the balance is short (nothing is written).
 */
export async function tryCharge(tx: Executor, line: LedgerLine, micros: number): Promise<{ transactionId: string; balanceMicros: number } | null> {
  if (!Number.isSafeInteger(micros) || micros < 0) throw new Error(`charge of ${micros} micros`);
  const [row] = await tx
    .update(accounts)
    .set({ balanceMicros: sql`${accounts.balanceMicros} - ${micros}` })
    .where(and(eq(accounts.accountId, line.accountId), gte(accounts.balanceMicros, micros)))
    .returning({ balance: accounts.balanceMicros });
  if (!row) return null;
  return { transactionId: await append(tx, line, -micros, row.balance), balanceMicros: row.balance };
}

/** The balance as it stands (read in the caller's transaction). */
export async function balanceOf(tx: Executor, accountId: string): Promise<number> {
  const [row] = await tx.select({ balance: accounts.balanceMicros }).from(accounts).where(eq(accounts.accountId, accountId));
  return row?.balance ?? 0;
}

/** The 402 every refused charge gives: how much was needed and how much there is. */
export function insufficientBalance(what: string, neededMicros: number, availableMicros: number): AppError {
  return new AppError(
    "insufficient_balance",
    `${what} costs ${formatMicros(neededMicros)} USD but the balance is ${formatMicros(availableMicros)} USD. Top up, then try again.`,
    { extra: { required: formatMicros(neededMicros), balance: formatMicros(availableMicros), currency: "USD" } },
  );
}

/** Charges or throws the 402. */
export async function charge(tx: Executor, line: LedgerLine, micros: number, what: string): Promise<{ transactionId: string; balanceMicros: number }> {
  const done = await tryCharge(tx, line, micros);
  if (!done) throw insufficientBalance(what, micros, await balanceOf(tx, line.accountId));
  return done;
}
