import { eq } from "drizzle-orm";
import type { Transaction } from "../db/database.js";
import { accounts } from "../db/schema/accounts.js";
import { newId } from "../ids.js";

/**
 * The account for a verified e-mail address, created on first sign-in. Concurrent first
 * sign-ins for one address end with one account: the loser of the insert race reads the winner's.
 */
export async function findOrCreateAccountByEmail(tx: Transaction, email: string): Promise<{ accountId: string; created: boolean }> {
  const [inserted] = await tx
    .insert(accounts)
    .values({ accountId: newId("acct"), email })
    .onConflictDoNothing({ target: accounts.email })
    .returning({ accountId: accounts.accountId });
  if (inserted) return { accountId: inserted.accountId, created: true };
  const [existing] = await tx.select({ accountId: accounts.accountId }).from(accounts).where(eq(accounts.email, email));
  return { accountId: existing!.accountId, created: false };
}
