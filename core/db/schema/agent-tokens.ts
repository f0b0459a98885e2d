import { index, pgTable, text } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";
import { accountIdColumn } from "./accounts.js";

/**
 * Agent tokens (`at_...`), the no-signup credential: random, stored as SHA-256 hashes, shown once
 * when minted. Listed beside the API keys with who minted them: a wallet (its payment proved it),
 * an API key, or another agent token of the account.
 */
export const agentTokens = pgTable(
  "agent_tokens",
  {
    tokenId: text("token_id").primaryKey(),
    accountId: accountIdColumn(),
    name: text("name"),
    tokenHash: text("token_hash").notNull().unique(),
    prefix: text("prefix").notNull(),
    /** Null only for a token issued before tokens were listed (its hash alone was kept) until its next use. */
    lastFour: text("last_four"),
    /** `wallet`, `api_key` or `agent_token`. */
    mintedByKind: text("minted_by_kind").notNull(),
    /** The wallet address, key_id or token_id; null for a token issued before tokens were listed by a key nobody recorded. */
    mintedById: text("minted_by_id"),
    createdAt: timestamptz("created_at").notNull().defaultNow(),
    lastUsedAt: timestamptz("last_used_at"),
    revokedAt: timestamptz("revoked_at"),
  },
  (t) => [index("agent_tokens_account_idx").on(t.accountId)],
);
