import { guardedRequest } from "../net/guarded-request.js";

export interface PostOutcome {
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
}

/** Only a 2xx takes an event: a redirect, like any other answer, is a failed attempt. */
export function isDelivered(statusCode: number | null): boolean {
  return statusCode !== null && statusCode >= 200 && statusCode < 300;
}

// Enough of a response to show a user why a delivery failed; the rest is discarded.
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * POSTs a body and reports the status, or why there is none (timeout, refused, a target the
 * guard refuses: core/net/guarded-request.ts checks it at every delivery). Never throws.
 * Redirects are not followed: a webhook answers where it is configured.
 */
export async function postWebhook(options: {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
}): Promise<PostOutcome> {
  const { statusCode, error, latencyMs } = await guardedRequest({ ...options, method: "POST", maxResponseBytes: MAX_RESPONSE_BYTES });
  return { statusCode, error, latencyMs };
}
