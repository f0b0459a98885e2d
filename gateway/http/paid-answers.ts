import { mintFirstAgentToken } from "../../core/auth/agent-tokens.js";
import { balanceOf } from "../../core/billing/ledger.js";
import { formatMicros } from "../../core/billing/money.js";
import type { Core } from "../../core/context.js";
import { AppError } from "../../core/errors.js";
import { storeAnswer } from "../../payments/settlements.js";
import type { PaymentOutcome } from "./payment-gate.js";
import type { Reply } from "./reply.js";
import { sealTokens, storable } from "./stored-answers.js";

/** A request the pay step settled a payment for. */
export type Paid = Extract<PaymentOutcome, { kind: "paid" }>;

/** What a payment bought, kept so that a retry with the same payment gets it again. */
export function keepPaidAnswer(core: Core, paid: Paid, reply: Reply): Promise<void> {
  return storeAnswer(core, paid.payment.settlementId, reply.status, sealTokens(core, reply.body));
}

/**
 * A paid request's refusal, as answered: with its payment note, and kept for a retry with the
 * same payment, unless the service failed (a 5xx), when the retry runs again.
 */
export async function refusedAfterPayment(core: Core, paid: Paid, error: AppError): Promise<AppError> {
  const noted = await withPaymentNote(core, paid, error);
  if (noted.status < 500) {
    const { status, body } = storable(noted);
    await storeAnswer(core, paid.payment.settlementId, status, sealTokens(core, body));
  }
  return noted;
}

/**
 * A paid request that was then refused (a 404, a 409, a 402 for a balance the price did not
 * cover): the payment was credited to the account before the handler ran, and stays there. The
 * refusal says so, with the balance now and how to spend it, so a wallet knows where its money
 * went. A wallet paying with no credential whose account has no live agent token gets one here
 * (the payment proves the wallet), once: a refusal never mints a token per refusal. The receipt
 * headers are set on the refusal as on a success.
 */
async function withPaymentNote(core: Core, { principal, payment, receiptHeaders }: Paid, error: AppError): Promise<AppError> {
  const { accountId } = principal;
  const balance = await balanceOf(core.db, accountId);
  const agentToken = payment.walletOwnAccount ? await core.db.transaction((tx) => mintFirstAgentToken(tx, accountId, payment.payer)) : null;
  const spend = agentToken
    ? "spend it with the agent_token on the /v1/x402 routes."
    : "spend it with the account's agent_token on the /v1/x402 routes (a top-up paid from this wallet with no credential mints a new one; GET /v1/auth/agent-tokens lists them).";
  const note = {
    credited: formatMicros(payment.amountMicros),
    balance: formatMicros(balance),
    currency: "USD",
    payer: payment.payer,
    agent_token: agentToken,
    test_money: payment.testMoney,
    detail: `Your payment of ${formatMicros(payment.amountMicros)} USD was credited to this wallet's balance before the request was refused, and stays there: ${spend}`,
  };
  return new AppError(error.code, error.detail, {
    errors: error.errors,
    headers: { ...receiptHeaders, ...error.headers },
    extra: { ...error.extra, payment: note },
    cause: error.cause,
  });
}
