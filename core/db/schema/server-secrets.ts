import { pgTable, text } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";

/** The server secret generated on first start when SECRET_KEY is unset, so restarts keep working. */
export const serverSecrets = pgTable("server_secrets", {
  name: text("name").primaryKey(),
  value: text("value").notNull(),
  createdAt: timestamptz("created_at").notNull().defaultNow(),
});
