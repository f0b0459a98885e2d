import { bigint, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";
import { accountIdColumn } from "./accounts.js";
import { agentIdColumn } from "./agents.js";
import { conversations } from "./conversations.js";

/**
 * A text message received on an agent's number, or sent from it. A received body is untrusted
 * data, stored as it came. A sent text has a status the carrier's reports move forward.
 */
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
    /** A sent text's status (queued, sent, delivered, undelivered, failed); null for a received one. */
    status: text("status").$type<OutboundSmsStatus>(),
    /** A sent text's parts, as billed. */
    segments: integer("segments"),
    /** What sending it charged (micro-USD), refunded if the carrier refused it at once. */
    chargedMicros: bigint("charged_micros", { mode: "number" }),
    /** The carrier's error code when the text failed or was undelivered. */
    errorCode: text("error_code"),
    statusUpdatedAt: timestamptz("status_updated_at"),
  },
  (t) => [
    index("messages_account_idx").on(t.accountId, t.messageId),
    index("messages_conversation_idx").on(t.conversationId, t.messageId),
    uniqueIndex("messages_carrier_ref_idx").on(t.carrierRef),
  ],
);

export const OUTBOUND_SMS_STATUSES = ["queued", "sent", "delivered", "undelivered", "failed"] as const;
export type OutboundSmsStatus = (typeof OUTBOUND_SMS_STATUSES)[number];
