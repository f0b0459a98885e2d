import { index, integer, pgTable, text, unique } from "drizzle-orm/pg-core";
import { timestamps, timestamptz } from "../columns.js";
import { accountIdColumn } from "./accounts.js";
import { agentIdColumn } from "./agents.js";

/** A text thread between an agent and one remote number. */
export const conversations = pgTable(
  "conversations",
  {
    conversationId: text("conversation_id").primaryKey(),
    accountId: accountIdColumn(),
    agentId: agentIdColumn(),
    remoteNumber: text("remote_number").notNull(),
    messageCount: integer("message_count").notNull().default(0),
    lastMessageAt: timestamptz("last_message_at").notNull().defaultNow(),
    ...timestamps,
  },
  (t) => [unique("conversations_agent_remote").on(t.agentId, t.remoteNumber), index("conversations_account_idx").on(t.accountId, t.lastMessageAt)],
);
