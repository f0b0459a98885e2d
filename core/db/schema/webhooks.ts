import { json, pgTable, text } from "drizzle-orm/pg-core";
import { timestamps } from "../columns.js";
import { accountIdColumn } from "./accounts.js";
import { agentIdColumn } from "./agents.js";

/** An agent's one webhook. The secret is stored encrypted with a key derived from the server secret. */
export const webhooks = pgTable("webhooks", {
  webhookId: text("webhook_id").primaryKey(),
  accountId: accountIdColumn(),
  agentId: agentIdColumn().unique(),
  url: text("url").notNull(),
  secretCiphertext: text("secret_ciphertext").notNull(),
  secretLastFour: text("secret_last_four").notNull(),
  signatureHeader: text("signature_header").notNull(),
  protocol: text("protocol").$type<"service-relay/1" | "service-relay/2">().notNull(),
  capabilities: json("capabilities").$type<string[]>().notNull(),
  ...timestamps,
});

export type WebhookRow = typeof webhooks.$inferSelect;
