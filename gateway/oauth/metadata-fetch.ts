import { request } from "node:https";
import type { LookupFunction } from "node:net";
import { guardedLookup, outgoingUrlProblem } from "../../core/net/address-guard.js";

/** A client ID metadata document is small; anything larger is refused unread. */
export const METADATA_MAX_BYTES = 5 * 1024;
/** How long its server has to answer in full. */
export const METADATA_TIMEOUT_MS = 5_000;

/** Why a fetch was refused, in words the error page shows (oidc-provider passes it on as `error_detail`). */
export class MetadataFetchError extends Error {}

/**
 * The DNS lookup for what the authorization server fetches: the one every client-given URL goes
 * through (core/net/address-guard.ts), so a client's document cannot point the service at its
 * own network.
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
  const failures = new RecentFailures();
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    // oidc-provider asks again while it builds its error page: the same answer, at once.
    const failed = failures.get(url.href);
    if (failed) throw failed;
    try {
      return await fetchOnce(url, init, lookup, allowPrivate);
    } catch (error) {
      failures.set(url.href, error as Error);
      throw error;
    }
  };
}

function fetchOnce(url: URL, init: RequestInit | undefined, lookup: LookupFunction, allowPrivate: boolean): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    // The scheme, credentials and an IP-literal host are checked here; a name as it resolves.
    const problem = url.protocol === "https:" ? outgoingUrlProblem(url, allowPrivate) : "must be an https:// URL";
    if (problem) return reject(new MetadataFetchError(`${url.href} ${problem}`));
    const loopback = allowPrivate && LOOPBACK.has(url.hostname);
    const headers = Object.fromEntries(new Headers(init?.headers ?? {}).entries());
    const req = request(url, { method: "GET", headers: { ...headers, "user-agent": "agentline" }, lookup, rejectUnauthorized: !loopback });
    let settled = false;
    const settle = () => {
      const first = !settled;
      settled = true;
      clearTimeout(timer);
      return first;
    };
    const fail = (error: Error) => {
      if (!settle()) return;
      req.destroy();
      reject(error instanceof MetadataFetchError ? error : new MetadataFetchError(`${url.href} could not be fetched: ${error.message}`));
    };
    const timer = setTimeout(
      () => fail(new MetadataFetchError(`${url.href} did not answer in full within ${METADATA_TIMEOUT_MS / 1000} s`)),
      METADATA_TIMEOUT_MS,
    );
    const tooBig = () => fail(new MetadataFetchError(`${url.href} is larger than ${METADATA_MAX_BYTES / 1024} KB`));
    req.on("error", fail);
    req.on("response", (res) => {
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
        if (!settle()) return;
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

// A failed fetch is remembered this long: its error answers again at once.
const FAILURE_MEMORY_MS = 10_000;
const MAX_FAILURES = 100;

/** The URLs whose fetch failed a moment ago, with why. */
class RecentFailures {
  private readonly failures = new Map<string, { error: Error; until: number }>();

  get(url: string): Error | undefined {
    const entry = this.failures.get(url);
    if (entry && entry.until > Date.now()) return entry.error;
    this.failures.delete(url);
    return undefined;
  }

  set(url: string, error: Error): void {
    this.failures.set(url, { error, until: Date.now() + FAILURE_MEMORY_MS });
    if (this.failures.size > MAX_FAILURES) this.failures.delete(this.failures.keys().next().value!);
  }
}
