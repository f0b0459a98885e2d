import { bigint, bigserial, boolean, index, integer, json, pgTable, text } from "drizzle-orm/pg-core";
import { timestamps, timestamptz } from "../columns.js";
import { accountIdColumn } from "./accounts.js";
import { agentIdColumn } from "./agents.js";

export type DeliveryStatus = "pending" | "sending" | "succeeded" | "abandoned";

/**
 * One message to deliver to a webhook, and its retry state: the durable job any process may
 * claim (FOR UPDATE SKIP LOCKED). A `sending` job whose claim has lapsed (its process died) is
 * claimed again. `event_seq` links a public event, which returns to the mailbox if the job is
 * abandoned; protocol-2 session messages have none.
 */
export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    deliveryId: text("delivery_id").primaryKey(),
    /** Creation order across processes: an agent's messages are first attempted in this order. */
    seq: bigserial("seq", { mode: "number" }).notNull().unique(),
    accountId: accountIdColumn(),
    agentId: agentIdColumn(),
    webhookId: text("webhook_id").notNull(),
    eventSeq: bigint("event_seq", { mode: "number" }),
    /** The id the receiver deduplicates on (an event id, or a protocol-2 message id). */
    messageId: text("message_id").notNull(),
    messageType: text("message_type").notNull(),
    body: json("body").$type<Record<string, unknown>>().notNull(),
    /** Claimed in the live lane: a live turn's message, or a session start's first attempt (deliveries.ts). */
    live: boolean("live").notNull().default(false),
    /** The turn a live message opens or amends, given up with it; its retries are the fast live ones. */
    turnId: text("turn_id"),
    status: text("status").$type<DeliveryStatus>().notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: timestamptz("next_attempt_at").notNull().defaultNow(),
    claimedUntil: timestamptz("claimed_until"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    completedAt: timestamptz("completed_at"),
    ...timestamps,
  },
  (t) => [index("webhook_deliveries_due_idx").on(t.status, t.nextAttemptAt), index("webhook_deliveries_agent_idx").on(t.agentId, t.seq)],
);
