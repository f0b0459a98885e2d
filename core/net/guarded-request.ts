import type { IncomingHttpHeaders } from "node:http";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { guardedLookup, outgoingUrlProblem } from "./address-guard.js";

/** A request the service sends to a URL a client gave it (a webhook, a client metadata document). */
export interface GuardedRequest {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  /** The whole exchange, connection to last byte. */
  timeoutMs: number;
  /** Private, loopback and link-local targets, and http://, are let through (ALLOW_PRIVATE_WEBHOOKS, for development). */
  allowPrivate: boolean;
  /** The most of the response body kept; a longer one is cut off there (`truncated`). */
  maxResponseBytes: number;
}

export interface GuardedResponse {
  /** null when there was no answer: `error` says why. */
  statusCode: number | null;
  headers: IncomingHttpHeaders;
  body: Buffer;
  truncated: boolean;
  error: string | null;
  latencyMs: number;
}

/**
 * Sends a request to a client-given URL only if its target may be reached: the scheme and the
 * host are checked at every request, an IP literal included (Node never resolves those, so the
 * lookup guard alone let a stored http://127.0.0.1 through), and a name is refused as it resolves
 * to a private address. Redirects are not followed. Never throws: a refusal, a timeout or a
 * failed connection is an answer with `error` set.
 */
export function guardedRequest(options: GuardedRequest): Promise<GuardedResponse> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const refused = (error: string) => Promise.resolve({ statusCode: null, headers: {}, body: Buffer.alloc(0), truncated: false, error, latencyMs: elapsed() });
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    return refused("not sent: the URL is not an absolute URL");
  }
  const problem = outgoingUrlProblem(url, options.allowPrivate);
  if (problem) return refused(`not sent: the URL ${problem}`);
  return new Promise((resolve) => {
    let settled = false;
    const chunks: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    let answered: { statusCode: number | null; headers: IncomingHttpHeaders } = { statusCode: null, headers: {} };
    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      resolve({ ...answered, body: Buffer.concat(chunks), truncated, error, latencyMs: elapsed() });
    };
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const headers = options.body === undefined ? options.headers : { ...options.headers, "content-length": String(Buffer.byteLength(options.body)) };
    const req = send(url, { method: options.method, headers, lookup: guardedLookup(options.allowPrivate), timeout: options.timeoutMs, agent: false }, (res) => {
      answered = { statusCode: res.statusCode ?? null, headers: res.headers };
      res.on("data", (chunk: Buffer) => {
        const room = options.maxResponseBytes - kept;
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room));
          kept += room;
          truncated = true;
          res.destroy();
          return;
        }
        chunks.push(chunk);
        kept += chunk.length;
      });
      res.on("close", () => finish(null));
      res.on("error", () => finish(null));
    });
    const deadline = setTimeout(() => {
      req.destroy();
      answered = { statusCode: null, headers: {} };
      finish(`timed out after ${options.timeoutMs} ms`);
    }, options.timeoutMs);
    req.on("timeout", () => req.destroy(new Error(`timed out after ${options.timeoutMs} ms`)));
    req.on("error", (error: NodeJS.ErrnoException) => {
      answered = { statusCode: null, headers: {} };
      finish(error.code === "EPRIVATE" ? error.message : `${error.code ?? "error"}: ${error.message}`);
    });
    req.on("close", () => clearTimeout(deadline));
    req.end(options.body);
  });
}
