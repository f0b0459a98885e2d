import { index, pgTable, text } from "drizzle-orm/pg-core";
import { timestamps, timestamptz } from "../columns.js";
import { accountIdColumn } from "../ownership.js";
import { accounts } from "./accounts.js";
import { agents } from "./agents.js";

/**
 * A phone number on an account. `phone_number` is unique across all rows for ever: a released
 * number is never sold or attached again. Deleting an agent leaves its numbers unassigned.
 */
export const numbers = pgTable(
  "numbers",
  {
    numberId: text("number_id").primaryKey(),
    accountId: accountIdColumn(),
    agentId: text("agent_id").references(() => agents.agentId, { onDelete: "set null" }),
    phoneNumber: text("phone_number").notNull().unique(),
    country: text("country").notNull(),
    numberType: text("number_type").$type<"local" | "toll_free" | "mobile">().notNull(),
    /** `purchased` through the service, or `attached` (bought elsewhere). */
    source: text("source").$type<"purchased" | "attached">().notNull(),
    status: text("status").$type<"active" | "released">().notNull().default("active"),
    carrierRef: text("carrier_ref"),
    releasedAt: timestamptz("released_at"),
    ...timestamps,
  },
  (t) => [index("numbers_account_idx").on(t.accountId, t.numberId), index("numbers_agent_idx").on(t.agentId)],
);
