import { request } from "node:https";
import type { LookupFunction } from "node:net";
import { guardedLookup, webhookUrlProblem } from "../../core/webhooks/url-guard.js";

/** A client ID metadata document is small; anything larger is refused unread. */
export const METADATA_MAX_BYTES = 5 * 1024;
/** How long its server has to answer in full. */
export const METADATA_TIMEOUT_MS = 5_000;

/** Why a fetch was refused, in words the error page shows (oidc-provider passes it on as `error_detail`). */
export class MetadataFetchError extends Error {}

/**
 * The DNS lookup for what the authorization server fetches: the webhook guard's, so a client's
 * document cannot point the service at its own network. One place to point at a stricter guard.
 */
function lookupFor(allowPrivate: boolean): LookupFunction {
  return guardedLookup(allowPrivate);
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/**
 * The `fetch` oidc-provider uses for client ID metadata documents (and any other URL a client
 * names): GET over https only, to a public address (checked on the URL and again on the resolved
 * address), at most METADATA_MAX_BYTES within METADATA_TIMEOUT_MS, no redirects followed.
 * With ALLOW_PRIVATE_WEBHOOKS (development) a loopback document is fetched too, without checking
 * its certificate: no network lies between this process and its own machine, and tests serve
 * their documents there with a throwaway certificate.
 */
export function guardedFetch(allowPrivate: boolean): (input: string | URL | Request, init?: RequestInit) => Promise<Response> {
  const lookup = lookupFor(allowPrivate);
  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const problem = url.protocol === "https:" ? webhookUrlProblem(url.href, allowPrivate) : "must be an https:// URL";
      if (problem) return reject(new MetadataFetchError(`${url.href} ${problem}`));
      const loopback = allowPrivate && LOOPBACK.has(url.hostname);
      const headers = Object.fromEntries(new Headers(init?.headers ?? {}).entries());
      const req = request(url, { method: "GET", headers: { ...headers, "user-agent": "agentline" }, lookup, rejectUnauthorized: !loopback });
      const timer = setTimeout(() => req.destroy(new MetadataFetchError(`${url.href} did not answer in full within ${METADATA_TIMEOUT_MS / 1000} s`)), METADATA_TIMEOUT_MS);
      const fail = (error: Error) => {
        clearTimeout(timer);
        reject(error instanceof MetadataFetchError ? error : new MetadataFetchError(`${url.href} could not be fetched: ${error.message}`));
      };
      req.on("error", fail);
      req.on("response", (res) => {
        const tooBig = () => req.destroy(new MetadataFetchError(`${url.href} is larger than ${METADATA_MAX_BYTES / 1024} KB`));
        if (Number(res.headers["content-length"] ?? 0) > METADATA_MAX_BYTES) return tooBig();
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > METADATA_MAX_BYTES) return tooBig();
          chunks.push(chunk);
        });
        res.on("error", fail);
        res.on("end", () => {
          clearTimeout(timer);
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(res.headers)) if (typeof value === "string") responseHeaders.set(name, value);
          const status = res.statusCode ?? 500;
          // A Response cannot carry a body with these statuses.
          const body = [204, 205, 304].includes(status) ? null : Buffer.concat(chunks);
          resolve(new Response(body, { status, headers: responseHeaders }));
        });
      });
      req.end();
    });
}
