import { timestamp } from "drizzle-orm/pg-core";

/** A timestamptz column read and written as a Date. */
export function timestamptz(name: string) {
  return timestamp(name, { withTimezone: true, mode: "date" });
}

/** created_at and updated_at, spread into tables whose rows change. */
export const timestamps = {
  createdAt: timestamptz("created_at").notNull().defaultNow(),
  updatedAt: timestamptz("updated_at").notNull().defaultNow(),
};
