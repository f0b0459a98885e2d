import { and, eq } from "drizzle-orm";
import { credit } from "../billing/ledger.js";
import type { Executor, Transaction } from "../db/database.js";
import { accountIdentities } from "../db/schema/account-identities.js";
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

/**
 * The account of an OpenID Connect identity (issuer, subject), created with the signup credit on
 * its first sign-in. Keyed on the pair alone, never on an e-mail claim: an AgentID sign-in never
 * lands in an e-mail account, whatever address the provider reports. Concurrent first sign-ins
 * of one identity end with one account: the loser of the link race drops the account it made.
 */
export async function findOrCreateAccountByIdentity(
  tx: Transaction,
  identity: { issuer: string; subject: string },
  signup: { creditMicros: number; at: Date },
): Promise<{ accountId: string; created: boolean }> {
  const linkedTo = async () => {
    const [row] = await tx
      .select({ accountId: accountIdentities.accountId })
      .from(accountIdentities)
      .where(and(eq(accountIdentities.issuer, identity.issuer), eq(accountIdentities.subject, identity.subject)));
    return row?.accountId;
  };
  const existing = await linkedTo();
  if (existing) return { accountId: existing, created: false };
  const accountId = newId("acct");
  await tx.insert(accounts).values({ accountId, createdAt: signup.at });
  const [linked] = await tx
    .insert(accountIdentities)
    .values({ issuer: identity.issuer, subject: identity.subject, accountId, createdAt: signup.at })
    .onConflictDoNothing()
    .returning({ accountId: accountIdentities.accountId });
  if (!linked) {
    await tx.delete(accounts).where(eq(accounts.accountId, accountId));
    return { accountId: (await linkedTo())!, created: false };
  }
  await grantSignupCredit(tx, accountId, signup.creditMicros, signup.at);
  return { accountId, created: true };
}

/** How a page names an account to its owner: its e-mail address, else its wallet, else its id. */
export async function accountLabel(db: Executor, accountId: string): Promise<string> {
  const [row] = await db.select({ email: accounts.email, wallet: accounts.walletAddress }).from(accounts).where(eq(accounts.accountId, accountId));
  return row?.email ?? row?.wallet ?? accountId;
}
