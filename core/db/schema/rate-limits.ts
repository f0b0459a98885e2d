import { jsonb, pgTable, text } from "drizzle-orm/pg-core";

/**
 * Sliding-window rate limit state, one row per limited key (`otp:email:x@y`). `hits` holds the
 * epoch milliseconds of the requests inside the window. The row is locked while it is checked,
 * so the limit holds across every process sharing the database.
 */
export const rateLimits = pgTable("rate_limits", {
  key: text("key").primaryKey(),
  hits: jsonb("hits").$type<number[]>().notNull().default([]),
});
