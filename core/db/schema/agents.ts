import { index, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { timestamps } from "../columns.js";
import { accountIdColumn } from "./accounts.js";

/** A software agent: the owner of numbers, calls, messages and events. */
export const agents = pgTable(
  "agents",
  {
    agentId: text("agent_id").primaryKey(),
    accountId: accountIdColumn(),
    name: text("name").notNull(),
    description: text("description"),
    ownerNumber: text("owner_number"),
    voiceId: text("voice_id"),
    /** Spoken when the agent answers an inbound call, before the caller says anything. */
    greeting: text("greeting"),
    metadata: jsonb("metadata").$type<Record<string, unknown>>().notNull().default({}),
    ...timestamps,
  },
  (t) => [index("agents_account_idx").on(t.accountId, t.agentId)],
);

/** The agent a row belongs to; deleting the agent deletes the row. */
export function agentIdColumn() {
  return text("agent_id")
    .notNull()
    .references(() => agents.agentId, { onDelete: "cascade" });
}
