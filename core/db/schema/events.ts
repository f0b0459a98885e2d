import { bigserial, index, json, pgTable, text } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";
import { accountIdColumn } from "./accounts.js";
import { agentIdColumn } from "./agents.js";

/**
 * Every event, written in the transaction of the change that caused it. `envelope` is exactly
 * what is delivered. `seq` orders an agent's events. An event is `pending` until a relay ack, a
 * webhook 2xx or a mailbox poll makes it `delivered`.
 */
export const events = pgTable(
  "events",
  {
    seq: bigserial("seq", { mode: "number" }).primaryKey(),
    eventId: text("event_id").notNull().unique(),
    accountId: accountIdColumn(),
    agentId: agentIdColumn(),
    eventType: text("event_type").notNull(),
    // json, not jsonb: it keeps the envelope's fields in the order they were written.
    envelope: json("envelope").$type<Record<string, unknown>>().notNull(),
    status: text("status").$type<"pending" | "delivered">().notNull().default("pending"),
    /**
     * Where it is headed: `relay` (a relay socket was open when it was made), `webhook` (the
     * agent's webhook has it; hidden from the mailbox until delivered or given up), `mailbox`.
     */
    route: text("route").$type<"relay" | "webhook" | "mailbox">().notNull().default("mailbox"),
    /** How it was delivered: `mailbox`, `relay` or `webhook`. */
    deliveredVia: text("delivered_via"),
    deliveredAt: timestamptz("delivered_at"),
    createdAt: timestamptz("created_at").notNull().defaultNow(),
  },
  (t) => [index("events_pending_idx").on(t.accountId, t.status, t.seq), index("events_agent_idx").on(t.agentId, t.status, t.seq)],
);
