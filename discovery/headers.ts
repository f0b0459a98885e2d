interface HeaderSpec {
  description: string;
  schema: { type: "string" | "integer"; enum?: string[]; minimum?: number };
}

const headers = {
  "X-Request-Id": {
    description: "The request's id (yours, when you sent a plain X-Request-Id): in every log line of the request and in every problem's `request_id`.",
    schema: { type: "string" },
  },
  "Retry-After": { description: "Seconds to wait before trying again.", schema: { type: "integer", minimum: 0 } },
  "WWW-Authenticate": {
    description: "On a 401: the Bearer challenge (RFC 6750). On a 402: MPP's `Payment` challenge.",
    schema: { type: "string" },
  },
  "PAYMENT-REQUIRED": {
    description: "On a 402: the x402 v2 challenge, base64 JSON of the payment requirements. Answer with PAYMENT-SIGNATURE (or x402 v1's X-PAYMENT).",
    schema: { type: "string" },
  },
  "PAYMENT-RESPONSE": { description: "x402 v2 receipt of a settled payment, base64 JSON.", schema: { type: "string" } },
  "X-PAYMENT-RESPONSE": { description: "x402 v1 receipt of a settled X-PAYMENT, base64 JSON.", schema: { type: "string" } },
  "Payment-Receipt": { description: "MPP receipt of a settled payment.", schema: { type: "string" } },
  "X-Payment-Test-Money": {
    description: "`true` when the payment was settled in PAYMENTS_MODE=local: nothing moved on a chain.",
    schema: { type: "string", enum: ["true"] },
  },
  "Idempotent-Replayed": {
    description: "`true` when this is the stored answer to an earlier request with the same Idempotency-Key.",
    schema: { type: "string", enum: ["true"] },
  },
  "Cache-Control": {
    description: "`no-store`: reading this consumed what it returned; no cache may keep or replay it.",
    schema: { type: "string", enum: ["no-store"] },
  },
} satisfies Record<string, HeaderSpec>;

export type ResponseHeaderName = keyof typeof headers;

/** Response headers the service sends, as OpenAPI header objects (components/headers). */
export const RESPONSE_HEADERS: Record<ResponseHeaderName, HeaderSpec> = headers;
