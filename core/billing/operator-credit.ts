import { eq } from "drizzle-orm";
import type { Core } from "../context.js";
import { accounts } from "../db/schema/accounts.js";
import { AppError, notFound } from "../errors.js";
import { credit } from "./ledger.js";
import { formatMicros, USD_AMOUNT, usdToMicros } from "./money.js";

/** An operator adds money to an account (a goodwill credit, a bank transfer), with a note for the ledger. */
export async function operatorCredit(core: Core, input: { accountId: string; amountUsd: string; note: string }) {
  const micros = USD_AMOUNT.test(input.amountUsd) ? usdToMicros(input.amountUsd) : 0;
  if (micros === 0) {
    throw new AppError("validation_error", "amount must be a positive dollar amount with at most 6 decimals, such as 10 or 2.50.");
  }
  if (input.note.trim() === "") throw new AppError("validation_error", "note must say why the credit is given.");
  return core.db.transaction(async (tx) => {
    const [account] = await tx.select({ accountId: accounts.accountId }).from(accounts).where(eq(accounts.accountId, input.accountId));
    if (!account) throw notFound("account", input.accountId);
    const result = await credit(tx, { accountId: input.accountId, category: "operator_credit", description: input.note.trim(), at: core.now() }, micros);
    return {
      account_id: input.accountId,
      transaction_id: result.transactionId,
      amount: formatMicros(micros),
      balance: formatMicros(result.balanceMicros),
      currency: "USD",
    };
  });
}
