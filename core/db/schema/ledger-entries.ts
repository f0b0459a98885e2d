import { bigint, index, pgTable, text } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";
import { accountIdColumn } from "./accounts.js";

export const LEDGER_CATEGORIES = ["signup_credit", "operator_credit", "topup", "number", "call", "sms", "recording"] as const;
export type LedgerCategory = (typeof LEDGER_CATEGORIES)[number];

/** What a debit (or its refund) was for, finer than the category. */
export const LEDGER_ITEMS = [
  "call.inbound",
  "call.outbound",
  "number.purchase",
  "number.renewal",
  "sms.inbound",
  "recording.storage",
  "sms.outbound",
  "call.transfer",
] as const;
export type LedgerItem = (typeof LEDGER_ITEMS)[number];

/**
 * The append-only ledger: every credit (positive) and debit (negative), in micro-USD, with the
 * balance after it. Rows are never updated or deleted; every report is computed from them.
 * References say what a row paid for (they are plain ids: the ledger outlives deleted agents).
 */
export const ledgerEntries = pgTable(
  "ledger_entries",
  {
    transactionId: text("transaction_id").primaryKey(),
    accountId: accountIdColumn(),
    amountMicros: bigint("amount_micros", { mode: "number" }).notNull(),
    balanceAfterMicros: bigint("balance_after_micros", { mode: "number" }).notNull(),
    category: text("category").$type<LedgerCategory>().notNull(),
    item: text("item").$type<LedgerItem>(),
    description: text("description").notNull(),
    callId: text("call_id"),
    numberId: text("number_id"),
    messageId: text("message_id"),
    /** For usage reports: seconds a call row paid (negative when refunded), months a number row paid, 1 per text. */
    quantity: bigint("quantity", { mode: "number" }).notNull().default(0),
    createdAt: timestamptz("created_at").notNull().defaultNow(),
  },
  (t) => [index("ledger_account_idx").on(t.accountId, t.createdAt), index("ledger_call_idx").on(t.callId), index("ledger_number_idx").on(t.numberId)],
);
