import type { Request } from "express";
import { findOrCreateWalletAccount } from "../../core/accounts/accounts.js";
import { mintFirstAgentToken } from "../../core/auth/agent-tokens.js";
import { balanceOf } from "../../core/billing/ledger.js";
import { formatMicros } from "../../core/billing/money.js";
import type { Core } from "../../core/context.js";
import { AppError } from "../../core/errors.js";
import type { Operation } from "../../discovery/operation.js";
import type { PaymentEngine } from "../../payments/engine.js";
import { creditSettlement } from "../../payments/settlements.js";
import type { AgentTokenAuth, PaymentAuth, UnpaidAuth, WalletAuth } from "./authenticate.js";
import { publicBaseUrl } from "./problem.js";
import { openTokens, replay } from "./stored-answers.js";
import type { Reply } from "./reply.js";

/** A payment settled and credited for this request: who paid and how much. */
export interface PaymentMade {
  payer: `0x${string}`;
  amountMicros: number;
}

/**
 * A paid request, resolved: who it acts for (with the receipt to return and, when a payment
 * came with it, that payment), or the stored answer of a retry.
 */
export type GateOutcome = { principal: WalletAuth | PaymentAuth; receiptHeaders: Record<string, string>; payment?: PaymentMade } | { reply: Reply };

/** The request as the payment libraries read it: a Fetch Request with the exact bytes sent. */
function toFetchRequest(req: Request): globalThis.Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  // Beside an API key, an MPP credential travels in Payment-Authorization (the challenge says
  // so). mppx's EVM method reads only Authorization, and the key has been dealt with already.
  const beside = req.get("payment-authorization");
  if (beside) {
    headers.set("authorization", beside);
    headers.delete("payment-authorization");
  }
  const raw = (req as { rawBody?: Buffer }).rawBody;
  const hasBody = raw !== undefined && raw.length > 0 && req.method !== "GET" && req.method !== "HEAD";
  return new Request(publicBaseUrl(req) + req.originalUrl, { method: req.method, headers, body: hasBody ? new Uint8Array(raw) : undefined });
}

function howToPay(req: Request, price: number): string {
  const base = publicBaseUrl(req);
  return (
    `This request costs ${formatMicros(price)} USD. Pay with x402 (the PAYMENT-REQUIRED challenge; answer with PAYMENT-SIGNATURE, or x402 v1's X-PAYMENT) ` +
    `or MPP (the WWW-Authenticate: Payment challenge; answer with Authorization: Payment), or send an agent_token ('Authorization: Bearer at_...') ` +
    `whose balance covers it: top up at ${base}/v1/billing/topup/x402/pay?amount=. Details: ${base}/.well-known/agent-payments.json.`
  );
}

function paymentProblem(req: Request, engine: PaymentEngine, route: Operation, code: "payment_required" | "insufficient_balance", price: number, headers: Headers, reason?: string): AppError {
  const challengeHeaders: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (name !== "content-type" && name !== "content-length") challengeHeaders[name] = value;
  });
  const base = publicBaseUrl(req);
  // x402 v1 clients read their challenge from the body, and pay with X-PAYMENT.
  const accepts = engine.v1Accepts(price, base + req.originalUrl, route.summary);
  const v1 = accepts.length > 0 ? { x402Version: 1, accepts, error: reason ?? "X-PAYMENT header is required" } : {};
  // Reasons from mppx end with a full stop, ours do not: one sentence end either way.
  const refused = reason ? `Payment refused: ${reason.replace(/\.+$/, "")}. ` : "";
  return new AppError(code, `${refused}${howToPay(req, price)}`, {
    headers: challengeHeaders,
    extra: { price: formatMicros(price), currency: "USD", payment_methods: ["x402", "mpp"], topup: `${base}/v1/billing/topup/x402/pay`, discovery: `${base}/.well-known/agent-payments.json`, ...v1 },
  });
}

/**
 * Makes a request pay, after its input is validated and before anything is served. An agent
 * token must have a balance covering the price (else 402 with both challenges). A payment is
 * settled, then credited to the payer's account (created on its first payment) or to the
 * account the request's credential names; the handler then runs as that account, and what it
 * spends is charged from that balance as always. The same request retried with the same payment
 * gets the stored answer.
 */
export async function payForRequest(
  core: Core,
  engine: PaymentEngine,
  req: Request,
  route: Operation,
  auth: AgentTokenAuth | UnpaidAuth,
  input: { params: unknown; query: unknown; body: unknown },
  requestHash: string,
): Promise<GateOutcome> {
  const price = await route.price!.amount(core, input as never);
  const unpaid = () => engine.collect(toFetchRequest(req), price, { scope: `${route.method.toUpperCase()} ${route.path}`, requestHash, description: route.summary, besideAuth: req.get("authorization") !== undefined });

  if (auth.kind === "agent_token" && (await balanceOf(core.db, auth.accountId)) >= price) {
    return { principal: { kind: "wallet", accountId: auth.accountId, settlementId: null }, receiptHeaders: {} };
  }
  // An agent token whose balance falls short may come with a payment: it is credited to the
  // token's account like any other, never settled and then dropped.
  const collected = await unpaid();
  if (collected.kind === "challenge") {
    throw paymentProblem(req, engine, route, auth.kind === "agent_token" ? "insufficient_balance" : "payment_required", price, collected.headers, collected.reason);
  }
  if (collected.kind === "replay") {
    const { responseStatus, responseBody } = collected.settlement;
    return { reply: replay(responseStatus!, openTokens(core, responseBody), { "Idempotent-Replayed": "true" }) };
  }
  const accountId = await core.db.transaction(async (tx) => {
    const account = auth.accountId ?? (await findOrCreateWalletAccount(tx, collected.payer)).accountId;
    await creditSettlement(tx, collected.settlementId, account, core.now());
    return account;
  });
  const receiptHeaders: Record<string, string> = {};
  collected.receiptHeaders.forEach((value, name) => (receiptHeaders[name] = value));
  if (engine.settings.testMoney) receiptHeaders["x-payment-test-money"] = "true";
  const principal: WalletAuth | PaymentAuth =
    route.auth === "payment"
      ? { kind: "payment", accountId, settlementId: collected.settlementId, payer: collected.payer, amountMicros: collected.amountMicros, credential: auth.kind === "unpaid" ? (auth.credential ?? null) : null }
      : { kind: "wallet", accountId, settlementId: collected.settlementId };
  return { principal, receiptHeaders, payment: { payer: collected.payer, amountMicros: collected.amountMicros } };
}

/**
 * A paid request that was then refused (a 404, a 409, a 402 for a balance the price did not
 * cover): the payment was credited to the account before the handler ran, and stays there. The
 * refusal says so, with the balance now and how to spend it, so a wallet knows where its money
 * went. A wallet paying with no credential whose account has no live agent token gets one here
 * (the payment proves the wallet), once: a refusal never mints a token per refusal. The receipt
 * headers are set on the refusal as on a success.
 */
export async function withPaymentNote(
  core: Core,
  error: AppError,
  target: { accountId: string; walletOwnAccount: boolean },
  payment: PaymentMade,
  receiptHeaders: Record<string, string>,
  testMoney: boolean,
): Promise<AppError> {
  const balance = await balanceOf(core.db, target.accountId);
  const agentToken = target.walletOwnAccount ? await core.db.transaction((tx) => mintFirstAgentToken(tx, target.accountId, payment.payer)) : null;
  const spend = agentToken
    ? "spend it with the agent_token on the /v1/x402 routes."
    : "spend it with the account's agent_token on the /v1/x402 routes (a top-up paid from this wallet with no credential mints a new one; GET /v1/auth/agent-tokens lists them).";
  const note = {
    credited: formatMicros(payment.amountMicros),
    balance: formatMicros(balance),
    currency: "USD",
    payer: payment.payer,
    agent_token: agentToken,
    test_money: testMoney,
    detail: `Your payment of ${formatMicros(payment.amountMicros)} USD was credited to this wallet's balance before the request was refused, and stays there: ${spend}`,
  };
  return new AppError(error.code, error.detail, { errors: error.errors, headers: { ...receiptHeaders, ...error.headers }, extra: { ...error.extra, payment: note }, cause: error.cause });
}
