import { eq } from "drizzle-orm";
import { credit } from "../billing/ledger.js";
import type { Transaction } from "../db/database.js";
import { accounts } from "../db/schema/accounts.js";
import { newId } from "../ids.js";

/** New accounts start with this much credit (SIGNUP_CREDIT_USD), recorded in the ledger. */
export async function grantSignupCredit(tx: Transaction, accountId: string, micros: number, at: Date): Promise<void> {
  if (micros > 0) await credit(tx, { accountId, category: "signup_credit", description: "Welcome credit", at }, micros);
}

/**
 * The account for a verified e-mail address, created on first sign-in with the signup credit.
 * Concurrent first sign-ins for one address end with one account: the loser of the insert race
 * reads the winner's (and grants nothing).
 */
export async function findOrCreateAccountByEmail(
  tx: Transaction,
  email: string,
  signup: { creditMicros: number; at: Date } = { creditMicros: 0, at: new Date() },
): Promise<{ accountId: string; created: boolean }> {
  const [inserted] = await tx
    .insert(accounts)
    .values({ accountId: newId("acct"), email })
    .onConflictDoNothing({ target: accounts.email })
    .returning({ accountId: accounts.accountId });
  if (inserted) {
    await grantSignupCredit(tx, inserted.accountId, signup.creditMicros, signup.at);
    return { accountId: inserted.accountId, created: true };
  }
  const [existing] = await tx.select({ accountId: accounts.accountId }).from(accounts).where(eq(accounts.email, email));
  return { accountId: existing!.accountId, created: false };
}

/**
 * The account of a wallet, created by its first payment (no signup, no signup credit: the
 * wallet brings its own money). Keyed on the checksummed address; concurrent first payments
 * from one wallet end with one account.
 */
export async function findOrCreateWalletAccount(tx: Transaction, walletAddress: string): Promise<{ accountId: string; created: boolean }> {
  const [inserted] = await tx
    .insert(accounts)
    .values({ accountId: newId("acct"), walletAddress })
    .onConflictDoNothing({ target: accounts.walletAddress })
    .returning({ accountId: accounts.accountId });
  if (inserted) return { accountId: inserted.accountId, created: true };
  const [existing] = await tx.select({ accountId: accounts.accountId }).from(accounts).where(eq(accounts.walletAddress, walletAddress));
  return { accountId: existing!.accountId, created: false };
}
