import { randomBytes } from "node:crypto";
import { findOrCreateAccountByEmail } from "../core/accounts/accounts.js";
import { mintApiKey } from "../core/auth/api-keys.js";
import { credit } from "../core/billing/ledger.js";
import type { Core } from "../core/context.js";

export interface TestAccount {
  accountId: string;
  apiKey: string;
  keyId: string;
  email: string;
}

/**
 * An account with a live API key, made through core rather than OTP: tests need many accounts,
 * and the sign-in limits (5 codes per IP per 10 minutes) are tested on their own. It is credited
 * generously (an operator credit in the ledger) unless a test asks for a particular balance.
 */
export async function createAccount(
  core: Pick<Core, "db"> & Partial<Pick<Core, "now">>,
  email = `user-${randomBytes(4).toString("hex")}@example.com`,
  options: { creditMicros?: number } = {},
): Promise<TestAccount> {
  return core.db.transaction(async (tx) => {
    const { accountId } = await findOrCreateAccountByEmail(tx, email);
    const amount = options.creditMicros ?? 1_000_000_000;
    if (amount > 0) await credit(tx, { accountId, category: "operator_credit", description: "test credit", at: core.now?.() ?? new Date() }, amount);
    const key = await mintApiKey(tx, accountId, "test");
    return { accountId, apiKey: key.api_key, keyId: key.key_id, email };
  });
}
