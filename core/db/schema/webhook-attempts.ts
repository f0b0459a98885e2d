import { bigserial, index, integer, pgTable, text } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";
import { accountIdColumn } from "./accounts.js";
import { agentIdColumn } from "./agents.js";
import { webhookDeliveries } from "./webhook-deliveries.js";

/** Every HTTP attempt at a webhook delivery, so a user can see why one failed. */
export const webhookAttempts = pgTable(
  "webhook_attempts",
  {
    attemptId: bigserial("attempt_id", { mode: "number" }).primaryKey(),
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.deliveryId, { onDelete: "cascade" }),
    accountId: accountIdColumn(),
    agentId: agentIdColumn(),
    messageId: text("message_id").notNull(),
    messageType: text("message_type").notNull(),
    url: text("url").notNull(),
    attempt: integer("attempt").notNull(),
    statusCode: integer("status_code"),
    latencyMs: integer("latency_ms").notNull(),
    error: text("error"),
    createdAt: timestamptz("created_at").notNull().defaultNow(),
  },
  (t) => [index("webhook_attempts_agent_idx").on(t.agentId, t.attemptId)],
);
