import { pgTable, text } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";
import { agents } from "./agents.js";

/**
 * The agent's open relay socket, if any, and which process holds it. The holder refreshes
 * `last_seen_at`; a row not refreshed for a minute belongs to a dead process and is ignored.
 */
export const relaySessions = pgTable("relay_sessions", {
  agentId: text("agent_id")
    .primaryKey()
    .references(() => agents.agentId, { onDelete: "cascade" }),
  sessionId: text("session_id").notNull(),
  processId: text("process_id").notNull(),
  runtime: text("runtime").notNull(),
  connectedAt: timestamptz("connected_at").notNull().defaultNow(),
  lastSeenAt: timestamptz("last_seen_at").notNull().defaultNow(),
});
