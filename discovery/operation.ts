import type { z } from "zod";

/**
 * Who may call an operation:
 * - `none`: anyone;
 * - `api_key`: `Authorization: Bearer sk_...`;
 * - `api_key_or_push_token`: an API key, or the `pt_...` push token of one call;
 * - `api_key_or_agent_token`: an API key, or a no-signup wallet's `at_...` agent token;
 * - `agent_token_or_payment`: an agent token with balance, or an x402/MPP payment for the request.
 */
export type AuthPolicy = "none" | "api_key" | "api_key_or_push_token" | "api_key_or_agent_token" | "agent_token_or_payment";

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
  /** Honours an `Idempotency-Key` header: a retry with the same key and request gets the first answer. */
  idempotent?: boolean;
  /** Extra members for the operation object, such as MPP's `x-payment-info`. */
  extensions?: Record<string, unknown>;
}
