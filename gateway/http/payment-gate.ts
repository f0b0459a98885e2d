import type { Request } from "express";
import { findOrCreateWalletAccount } from "../../core/accounts/accounts.js";
import { balanceOf } from "../../core/billing/ledger.js";
import { formatMicros } from "../../core/billing/money.js";
import type { Core } from "../../core/context.js";
import { AppError } from "../../core/errors.js";
import type { Operation } from "../../discovery/operation.js";
import type { PaymentEngine } from "../../payments/engine.js";
import { creditSettlement } from "../../payments/settlements.js";
import type { AgentTokenAuth, Caller, PaymentAuth, UnpaidAuth, WalletAuth } from "./principal.js";
import { publicBaseUrl } from "./problem.js";
import type { Reply } from "./reply.js";
import { fingerprint, type RequestInput } from "./request-input.js";
import { openTokens, storedAnswer } from "./stored-answers.js";

/** A payment settled and credited for this request: which, who paid, how much, and what its refusal note says. */
export interface PaymentMade {
  settlementId: string;
  payer: `0x${string}`;
  amountMicros: number;
  /** Paid with no credential: the payer's own wallet account. */
  walletOwnAccount: boolean;
  testMoney: boolean;
}

/**
 * What the pay step decides for a request, as x402's HTTPProcessResult does for its middleware:
 * - `free`: nothing to pay (the route has no price, or the credential is not a wallet's);
 * - `covered`: an agent token whose balance covers the price, spent as the handler spends it;
 * - `paid`: a payment settled and credited to the account the request then acts for, with the
 *   receipt to send back;
 * - `replay`: the same payment again, answered with what it bought the first time (a refusal
 *   is the same problem again);
 * - `payment-required`: no payment, or one refused: a 402 with both challenges.
 * The first three go on to the handler, as `principal`; the last two are the answer.
 */
export type PaymentOutcome =
  | { kind: "free"; principal: Exclude<Caller, UnpaidAuth> }
  | { kind: "covered"; principal: WalletAuth }
  | { kind: "paid"; principal: WalletAuth | PaymentAuth; receiptHeaders: Record<string, string>; payment: PaymentMade }
  | { kind: "replay"; answer: Reply | AppError }
  | { kind: "payment-required"; problem: AppError };

/** An outcome the request goes on with, to its handler. */
export type Proceed = Extract<PaymentOutcome, { principal: unknown }>;

/** The outcome of a request with nothing to pay: it acts for its caller. */
export function free(caller: Exclude<Caller, UnpaidAuth>): Proceed {
  return { kind: "free", principal: caller };
}

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

function paymentProblem(
  req: Request,
  engine: PaymentEngine,
  route: Operation,
  code: "payment_required" | "insufficient_balance",
  price: number,
  headers: Headers,
  reason?: string,
): AppError {
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
    extra: {
      price: formatMicros(price),
      currency: "USD",
      payment_methods: ["x402", "mpp"],
      topup: `${base}/v1/billing/topup/x402/pay`,
      discovery: `${base}/.well-known/agent-payments.json`,
      ...v1,
    },
  });
}

/**
 * The pay step, for an unpaid request or an agent token on a priced route, after the input is
 * validated and before anything is served. An agent token must have a balance covering the
 * price (else 402 with both challenges). A payment is settled, then credited to the payer's
 * account (created on its first payment) or to the account the request's credential names; the
 * handler then runs as that account, and what it spends is charged from that balance as always.
 * The same request retried with the same payment gets the stored answer.
 */
export async function pay(core: Core, route: Operation, req: Request, caller: AgentTokenAuth | UnpaidAuth, input: RequestInput): Promise<PaymentOutcome> {
  if (!route.price) throw new Error(`${route.method.toUpperCase()} ${route.path} takes payments but has no price`);
  const engine = await paymentEngine(core);
  const price = await route.price.amount(core, input);
  if (caller.kind === "agent_token" && (await balanceOf(core.db, caller.accountId)) >= price) {
    return { kind: "covered", principal: { kind: "wallet", accountId: caller.accountId, settlementId: null } };
  }
  // An agent token whose balance falls short may come with a payment: it is credited to the
  // token's account like any other, never settled and then dropped.
  const scope = `${route.method.toUpperCase()} ${route.path}`;
  const collected = await engine.collect(toFetchRequest(req), price, {
    scope,
    requestHash: fingerprint(req),
    description: route.summary,
    besideAuth: req.get("authorization") !== undefined,
  });
  if (collected.kind === "challenge") {
    const code = caller.kind === "agent_token" ? "insufficient_balance" : "payment_required";
    return { kind: "payment-required", problem: paymentProblem(req, engine, route, code, price, collected.headers, collected.reason) };
  }
  if (collected.kind === "replay") {
    const { responseStatus, responseBody } = collected.settlement;
    return { kind: "replay", answer: storedAnswer(responseStatus!, openTokens(core, responseBody), { "Idempotent-Replayed": "true" }) };
  }
  const { settlementId, payer, amountMicros } = collected;
  const accountId = await core.db.transaction(async (tx) => {
    const account = caller.accountId ?? (await findOrCreateWalletAccount(tx, payer)).accountId;
    await creditSettlement(tx, settlementId, account, core.now());
    return account;
  });
  const receiptHeaders: Record<string, string> = {};
  collected.receiptHeaders.forEach((value, name) => (receiptHeaders[name] = value));
  const testMoney = engine.settings.testMoney;
  if (testMoney) receiptHeaders["x-payment-test-money"] = "true";
  const credential = caller.kind === "unpaid" ? (caller.credential ?? null) : null;
  const principal: WalletAuth | PaymentAuth =
    route.auth === "payment" ? { kind: "payment", accountId, settlementId, payer, amountMicros, credential } : { kind: "wallet", accountId, settlementId };
  return {
    kind: "paid",
    principal,
    receiptHeaders,
    payment: { settlementId, payer, amountMicros, walletOwnAccount: caller.kind === "unpaid" && !caller.credential, testMoney },
  };
}

const engines = new WeakMap<Core, Promise<PaymentEngine>>();

/**
 * The payment engine, made on first use: it needs the public URL (known once the server
 * listens), and the payment libraries take a second to load, which only paid requests need.
 */
export function paymentEngine(core: Core): Promise<PaymentEngine> {
  let engine = engines.get(core);
  if (!engine) engines.set(core, (engine = import("../../payments/engine.js").then(({ PaymentEngine }) => new PaymentEngine(core))));
  return engine;
}
