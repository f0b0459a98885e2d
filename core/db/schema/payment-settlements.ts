import { bigint, index, integer, json, pgTable, text, unique } from "drizzle-orm/pg-core";
import { timestamps } from "../columns.js";

export type SettlementStatus = "settling" | "settled" | "failed";

/**
 * Every payment the service has accepted (x402 or MPP, an EIP-3009 transferWithAuthorization).
 * The unique (network, asset, payer, nonce) makes each signature good once, whatever process sees
 * it. The row remembers what the payment bought (`scope`, `request_hash`) and the answer given,
 * so a retry of the same request with the same payment gets the same answer and pays once.
 */
export const paymentSettlements = pgTable(
  "payment_settlements",
  {
    settlementId: text("settlement_id").primaryKey(),
    network: text("network").notNull(),
    asset: text("asset").notNull(),
    payer: text("payer").notNull(),
    nonce: text("nonce").notNull(),
    payee: text("payee").notNull(),
    amountMicros: bigint("amount_micros", { mode: "number" }).notNull(),
    /** `local` (test money, no chain), `chain` (our facilitator) or `facilitator` (a remote one). */
    mode: text("mode").$type<"local" | "chain" | "facilitator">().notNull(),
    status: text("status").$type<SettlementStatus>().notNull(),
    /** The on-chain transaction, or a local reference for test money. */
    reference: text("reference"),
    scope: text("scope").notNull(),
    requestHash: text("request_hash").notNull(),
    /** The account the payment was credited to, and its ledger row. */
    accountId: text("account_id"),
    transactionId: text("transaction_id"),
    responseStatus: integer("response_status"),
    responseBody: json("response_body"),
    ...timestamps,
  },
  (t) => [unique("payment_settlements_signature").on(t.network, t.asset, t.payer, t.nonce), index("payment_settlements_account_idx").on(t.accountId)],
);
