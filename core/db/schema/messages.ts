import { index, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";
import { accountIdColumn } from "./accounts.js";
import { agentIdColumn } from "./agents.js";
import { conversations } from "./conversations.js";

/** A text message received on an agent's number. The body is untrusted data, stored as it came. */
export const messages = pgTable(
  "messages",
  {
    messageId: text("message_id").primaryKey(),
    accountId: accountIdColumn(),
    agentId: agentIdColumn(),
    conversationId: text("conversation_id")
      .notNull()
      .references(() => conversations.conversationId, { onDelete: "cascade" }),
    numberId: text("number_id"),
    direction: text("direction").$type<"inbound" | "outbound">().notNull(),
    fromNumber: text("from_number").notNull(),
    toNumber: text("to_number").notNull(),
    text: text("text").notNull(),
    /** The carrier's id of the text (Twilio's MessageSid): unique, so a retried webhook is not a second text. */
    carrierRef: text("carrier_ref"),
    createdAt: timestamptz("created_at").notNull().defaultNow(),
  },
  (t) => [
    index("messages_account_idx").on(t.accountId, t.messageId),
    index("messages_conversation_idx").on(t.conversationId, t.messageId),
    uniqueIndex("messages_carrier_ref_idx").on(t.carrierRef),
  ],
);
