import { index, pgTable, text } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";
import { accountIdColumn } from "./accounts.js";

/** API keys, stored as SHA-256 hashes; the key itself is shown once, when minted. */
export const apiKeys = pgTable(
  "api_keys",
  {
    keyId: text("key_id").primaryKey(),
    accountId: accountIdColumn(),
    name: text("name"),
    keyHash: text("key_hash").notNull().unique(),
    prefix: text("prefix").notNull(),
    lastFour: text("last_four").notNull(),
    createdAt: timestamptz("created_at").notNull().defaultNow(),
    lastUsedAt: timestamptz("last_used_at"),
    revokedAt: timestamptz("revoked_at"),
  },
  (t) => [index("api_keys_account_idx").on(t.accountId)],
);
