import type { z } from "zod";

/**
 * Who may call an operation:
 * - `none`: anyone;
 * - `api_key`: `Authorization: Bearer sk_...`;
 * - `api_key_or_push_token`: an API key, or the `pt_...` push token of one call;
 * - `api_key_or_agent_token`: an API key, or a no-signup wallet's `at_...` agent token;
 * - `agent_token_or_payment`: an agent token with balance, or an x402/MPP payment for the request;
 * - `payment`: an x402/MPP payment, always (the top-up); an API key, if sent, names the account;
 * - `mcp`: an API key, an agent token, or an OAuth access token this service issued for /mcp.
 */
export type AuthPolicy = "none" | "api_key" | "api_key_or_push_token" | "api_key_or_agent_token" | "agent_token_or_payment" | "payment" | "mcp";

/**
 * What a paid operation costs, in micro-USD. `amount` may depend on the validated request (a
 * toll-free number costs more); it may throw a 4xx for a request that cannot be priced.
 */
export interface Price {
  /** For discovery: the price when it does not depend on the request, else null. */
  fixed(context: unknown): number | null;
  /** For discovery: the prices a request can have, by what decides them (e.g. number type). */
  variants?(context: unknown): Record<string, number>;
  /** For discovery: how the price is worked out. */
  description: string;
  amount(context: unknown, input: { params: unknown; query: unknown; body: unknown }): number | Promise<number>;
}

export type HttpMethod = "get" | "post" | "put" | "patch" | "delete";

export interface ResponseSpec {
  status: number;
  description: string;
  schema?: z.ZodType;
  /** Default application/json. */
  contentType?: string;
}

/**
 * An operation as the OpenAPI document describes it: everything about a route except its
 * handler. The gateway validates requests with exactly these schemas.
 */
export interface Operation {
  operationId: string;
  method: HttpMethod;
  /** OpenAPI form: `/v1/agents/{agent_id}`. */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: AuthPolicy;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** A body schema is required unless this is false (then an absent body reads as `{}`). */
  bodyRequired?: boolean;
  response: ResponseSpec;
  /** Other non-problem answers (for example /health's 503, which carries the health body). */
  otherResponses?: ResponseSpec[];
  /** Problem statuses beyond those implied by auth, params and body (401, 404, 400/413/415/422). */
  errors?: number[];
  /** Paid operations: the price of a request. */
  price?: Price;
  /**
   * The body is a protocol's own message (MCP's JSON-RPC) that the handler validates itself: the
   * gateway parses it as JSON and checks its envelope, but leaves the checks of its content
   * (text that cannot be stored, for one) to the protocol, which answers them in its own terms.
   */
  protocolBody?: boolean;
  /**
   * Why this POST refuses an `Idempotency-Key` (for example: its answer carries a secret the
   * service does not keep). Unset, a POST that acts for an account honours the key.
   */
  idempotencyRefused?: string;
  /** Reading it changes state (a mailbox poll consumes): never cached, never answered to HEAD. */
  consumes?: boolean;
  /** Extra members for the operation object, such as MPP's `x-payment-info`. */
  extensions?: Record<string, unknown>;
}

/**
 * The one Idempotency-Key rule: every POST that acts for an account (API key, agent token, push
 * token) honours it, unless the operation names why not; every other operation refuses it.
 */
export function takesIdempotencyKey(op: Operation): boolean {
  return op.method === "post" && op.auth !== "none" && !op.protocolBody && op.idempotencyRefused === undefined;
}

/** Why an operation refuses an Idempotency-Key, in words for the 422. */
export function idempotencyRefusal(op: Operation): string {
  if (op.idempotencyRefused) return op.idempotencyRefused;
  if (op.method !== "post") return `${op.method.toUpperCase()} can be repeated safely as it is; only POST requests take it`;
  if (op.auth === "none") return "it acts for no account, so there is nothing to remember the answer under";
  return "this route's body is a protocol message of its own";
}
