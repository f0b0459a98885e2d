import { createHmac } from "node:crypto";
import { eq } from "drizzle-orm";
import type { Core } from "../context.js";
import type { Executor } from "../db/database.js";
import { accounts } from "../db/schema/accounts.js";
import { hashToken } from "./tokens.js";

/**
 * An account's `agent_token` (`at_...`): what a no-signup wallet presents on the /v1/x402 routes
 * instead of paying per request. Derived from the server secret and the account, so the same
 * wallet always gets the same token (the top-up answers it again and again); it is stored only
 * as a hash, for the lookup.
 */
export async function issueAgentToken(core: Core, tx: Executor, accountId: string): Promise<string> {
  const token = "at_" + createHmac("sha256", core.secrets.derive("agent-token")).update(accountId).digest("base64url");
  await tx.update(accounts).set({ agentTokenHash: hashToken(token) }).where(eq(accounts.accountId, accountId));
  return token;
}

/** The account behind an agent token, or null for an unknown one. */
export async function authenticateAgentToken(core: Core, token: string): Promise<string | null> {
  if (!token.startsWith("at_")) return null;
  const [row] = await core.db.select({ accountId: accounts.accountId }).from(accounts).where(eq(accounts.agentTokenHash, hashToken(token)));
  return row?.accountId ?? null;
}
