import { bigint, boolean, index, pgTable, text } from "drizzle-orm/pg-core";
import { timestamps, timestamptz } from "../columns.js";
import { accountIdColumn } from "./accounts.js";
import { agents } from "./agents.js";

/**
 * A phone number on an account. `phone_number` is unique across all rows for ever: a released
 * number is never sold or attached again. Deleting an agent leaves its numbers unassigned.
 */
export const numbers = pgTable(
  "numbers",
  {
    numberId: text("number_id").primaryKey(),
    accountId: accountIdColumn(),
    agentId: text("agent_id").references(() => agents.agentId, { onDelete: "set null" }),
    phoneNumber: text("phone_number").notNull().unique(),
    country: text("country").notNull(),
    numberType: text("number_type").$type<"local" | "toll_free" | "mobile">().notNull(),
    /** `purchased` through the service, or `attached` (bought elsewhere). */
    source: text("source").$type<"purchased" | "attached">().notNull(),
    status: text("status").$type<"active" | "released">().notNull().default("active"),
    carrierRef: text("carrier_ref"),
    /** The monthly fee, micro-USD, fixed at purchase; 0 for attached numbers. */
    monthlyFeeMicros: bigint("monthly_fee_micros", { mode: "number" }).notNull().default(0),
    /** The lease: paid through this moment. Null for attached numbers (no fee). */
    paidThrough: timestamptz("paid_through"),
    /** Renewed by the service each month (API purchases), or only on request (prepaid leases). */
    autoRenew: boolean("auto_renew").notNull().default(true),
    /** When a renewal could not be paid; the number is released after the grace period. */
    renewalFailedAt: timestamptz("renewal_failed_at"),
    releasedAt: timestamptz("released_at"),
    /** Inbound calls to the number are recorded (after the recording notice). */
    recordInbound: boolean("record_inbound").notNull().default(false),
    ...timestamps,
  },
  (t) => [
    index("numbers_account_idx").on(t.accountId, t.numberId),
    index("numbers_agent_idx").on(t.agentId),
    index("numbers_lease_idx").on(t.status, t.paidThrough),
  ],
);
