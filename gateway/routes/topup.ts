import { mintAgentToken } from "../../core/auth/agent-tokens.js";
import { balanceOf } from "../../core/billing/ledger.js";
import { formatMicros } from "../../core/billing/money.js";
import type { Config } from "../../core/config.js";
import { TopupResult, topupQuery } from "../../core/wallet/schemas.js";
import { topupPrice } from "../../payments/prices.js";
import { defineRoute } from "../http/route.js";

const tags = ["Payments"];

/** The top-up bounds when no configuration says otherwise (TOPUP_MIN_USD, TOPUP_MAX_USD). */
const DEFAULT_BOUNDS = { topupMinMicros: 500_000, topupMaxMicros: 500_000_000 };

/**
 * Both methods, as the spec says: GET for the simplest clients, POST for everyone else. The
 * query documents this server's bounds.
 */
export function topupRoutes(payments: Pick<Config["payments"], "topupMinMicros" | "topupMaxMicros"> = DEFAULT_BOUNDS) {
  const query = topupQuery({ minMicros: payments.topupMinMicros, maxMicros: payments.topupMaxMicros });
  return (["get", "post"] as const).map((method) =>
    defineRoute({
      operationId: method === "get" ? "topupGet" : "topup",
      method,
      path: "/v1/billing/topup/x402/pay",
      summary: "Top up the balance with x402 or MPP",
      description:
        "Answers 402 with both challenges for `amount`; paid, it credits the wallet's account (created by its first payment) or, with an API key " +
        "(MPP: send the credential in Payment-Authorization then) or an agent_token, that account. `agent_token`: paid with no credential, a new " +
        "token for the wallet's account (each such top-up mints one; earlier ones stay live, listed by GET /v1/auth/agent-tokens); with an " +
        "agent_token, that same token; with an API key, null (mint one explicitly with POST /v1/auth/agent-tokens). " +
        "Retrying with the same payment returns the same answer and credits once.",
      tags,
      auth: "payment",
      query,
      idempotencyRefused: "a payment is good once: retrying with the same payment returns the first answer",
      price: topupPrice,
      response: { status: 200, description: "Credited", schema: TopupResult },
      handler: async ({ core, auth }) => {
        const { credential } = auth;
        // The payment proves the wallet: it mints a token. A credential already reaches the account.
        const agentToken = !credential
          ? (await mintAgentToken(core.db, auth.accountId, { kind: "wallet", id: auth.payer })).agent_token
          : credential.kind === "agent_token"
            ? credential.token
            : null;
        return {
          agent_token: agentToken,
          account_id: auth.accountId,
          payer: auth.payer,
          credited: formatMicros(auth.amountMicros),
          balance: formatMicros(await balanceOf(core.db, auth.accountId)),
          currency: "USD" as const,
          test_money: core.config.paymentsMode === "local",
        };
      },
    }),
  );
}
