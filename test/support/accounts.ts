import { randomBytes } from "node:crypto";
import { findOrCreateAccountByEmail } from "../../core/accounts/accounts.js";
import { mintApiKey } from "../../core/auth/api-keys.js";
import type { Core } from "../../core/core.js";

export interface TestAccount {
  accountId: string;
  apiKey: string;
  keyId: string;
  email: string;
}

/**
 * An account with a live API key, made through core rather than OTP: tests need many accounts,
 * and the sign-in limits (5 codes per IP per 10 minutes) are tested on their own.
 */
export async function createAccount(core: Pick<Core, "db">, email = `user-${randomBytes(4).toString("hex")}@example.com`): Promise<TestAccount> {
  return core.db.transaction(async (tx) => {
    const { accountId } = await findOrCreateAccountByEmail(tx, email);
    const key = await mintApiKey(tx, accountId, "test");
    return { accountId, apiKey: key.api_key, keyId: key.key_id, email };
  });
}
