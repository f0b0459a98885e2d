import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { guardedLookup } from "./url-guard.js";

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
 * POSTs a body and reports the status, or why there is none (timeout, refused, private
 * address). Never throws. Redirects are not followed: a webhook answers where it is configured.
 */
export function postWebhook(options: { url: string; headers: Record<string, string>; body: string; timeoutMs: number; allowPrivate: boolean }): Promise<PostOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (statusCode: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      resolve({ statusCode, error, latencyMs: elapsed() });
    };
    const url = new URL(options.url);
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const req = send(
      url,
      {
        method: "POST",
        headers: { ...options.headers, "content-length": String(Buffer.byteLength(options.body)) },
        lookup: guardedLookup(options.allowPrivate),
        timeout: options.timeoutMs,
        agent: false,
      },
      (res) => {
        let received = 0;
        res.on("data", (chunk: Buffer) => {
          received += chunk.length;
          if (received > MAX_RESPONSE_BYTES) res.destroy();
        });
        res.on("close", () => finish(res.statusCode ?? null, null));
        res.on("error", () => finish(res.statusCode ?? null, null));
      },
    );
    // The whole exchange, not just the connection, must finish within the timeout.
    const deadline = setTimeout(() => {
      req.destroy();
      finish(null, `timed out after ${options.timeoutMs} ms`);
    }, options.timeoutMs);
    req.on("timeout", () => req.destroy(new Error(`timed out after ${options.timeoutMs} ms`)));
    req.on("error", (error: NodeJS.ErrnoException) => finish(null, error.code === "EPRIVATE" ? error.message : `${error.code ?? "error"}: ${error.message}`));
    req.on("close", () => clearTimeout(deadline));
    req.end(options.body);
  });
}
