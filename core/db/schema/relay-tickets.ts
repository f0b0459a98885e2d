import { index, pgTable, text } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";
import { accountIdColumn } from "./accounts.js";
import { agents } from "./agents.js";

/**
 * Short-lived, single-use tickets that open the relay without an Authorization header (browsers
 * and built-in WebSockets cannot send one). Only the SHA-256 of a ticket is kept; redeeming it
 * deletes the row, so any process can redeem it, and only once.
 */
export const relayTickets = pgTable(
  "relay_tickets",
  {
    ticketHash: text("ticket_hash").primaryKey(),
    accountId: accountIdColumn(),
    agentId: text("agent_id")
      .notNull()
      .references(() => agents.agentId, { onDelete: "cascade" }),
    /** The API key (key_id) that minted the ticket: revoking it deletes its tickets. */
    credentialId: text("credential_id").notNull(),
    expiresAt: timestamptz("expires_at").notNull(),
    createdAt: timestamptz("created_at").notNull().defaultNow(),
  },
  (t) => [index("relay_tickets_expires_at_idx").on(t.expiresAt)],
);
