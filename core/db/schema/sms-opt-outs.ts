import { boolean, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";
import { accountIdColumn } from "./accounts.js";
import { numbers } from "./numbers.js";

/**
 * Whether a recipient texted STOP (or a synonym) to one of the service's numbers, and has not
 * texted START since: per number and remote number, as carriers keep it. A recipient opted out
 * gets no text from that number (409 recipient_opted_out).
 */
export const smsOptOuts = pgTable(
  "sms_opt_outs",
  {
    numberId: text("number_id")
      .notNull()
      .references(() => numbers.numberId, { onDelete: "cascade" }),
    remoteNumber: text("remote_number").notNull(),
    accountId: accountIdColumn(),
    optedOut: boolean("opted_out").notNull(),
    /** The word that set it (STOP, START, ...), upper case; CARRIER when the carrier reported it. */
    keyword: text("keyword").notNull(),
    updatedAt: timestamptz("updated_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.numberId, t.remoteNumber] })],
);
