import { bigserial, json, pgTable } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";

/**
 * Bus messages too large for a NOTIFY payload (8000 bytes): stored here and announced by id.
 * Rows older than a minute are swept.
 */
export const busMessages = pgTable("bus_messages", {
  id: bigserial("id", { mode: "number" }).primaryKey(),
  payload: json("payload").$type<Record<string, unknown>>().notNull(),
  createdAt: timestamptz("created_at").notNull().defaultNow(),
});
