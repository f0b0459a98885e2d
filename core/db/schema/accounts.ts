import { bigint, pgTable, text } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";

/** A customer. Signed-in accounts have an e-mail address; no-signup accounts a wallet address instead. */
export const accounts = pgTable("accounts", {
  accountId: text("account_id").primaryKey(),
  email: text("email").unique(),
  /** A no-signup account's wallet (checksummed address), keyed on by its first payment. */
  walletAddress: text("wallet_address").unique(),
  /** The account's default voice preset; null means the system default. */
  defaultVoiceId: text("default_voice_id"),
  /**
   * The prepaid balance in micro-USD: the sum of the account's ledger, kept here so a charge is
   * one conditional update. It changes only together with a ledger row, in one transaction.
   */
  balanceMicros: bigint("balance_micros", { mode: "number" }).notNull().default(0),
  createdAt: timestamptz("created_at").notNull().defaultNow(),
});

/** The account a row belongs to; deleting the account deletes the row. */
export function accountIdColumn() {
  return text("account_id")
    .notNull()
    .references(() => accounts.accountId, { onDelete: "cascade" });
}
