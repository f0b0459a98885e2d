import { CREDENTIAL_REVOKED_CHANNEL, revokedLately } from "../auth/revocation.js";
import { hashToken } from "../auth/tokens.js";
import type { Core } from "../context.js";
import type { OAuthPrincipal } from "./principal.js";

// A safety net only (revocations are announced): a cached token is looked up again after this.
const TTL_MS = 30_000;
const MAX_TOKENS = 1_000;

export interface CachedToken {
  principal: OAuthPrincipal;
  /** The token's own expiry, epoch milliseconds. */
  expiresAtMs: number;
  lastUsedAt: Date | null;
  cachedAt: number;
}

/**
 * The OAuth access tokens this process checked lately, by the hash of the token, so an /mcp
 * request costs no lookup, as API keys do (key-cache.ts).
 */
export class OAuthTokenCache {
  private readonly tokens = new Map<string, CachedToken>();

  // An OAuth connection is a credential like an API key: its id is what a revoke announces.
  constructor(private readonly core: Core) {
    core.bus.subscribe(CREDENTIAL_REVOKED_CHANNEL, (message) => this.forgetConnection(String(message.credential_id)));
  }

  get(token: string, now: number): CachedToken | undefined {
    const hash = hashToken(token);
    const entry = this.tokens.get(hash);
    if (entry && now - entry.cachedAt < TTL_MS) return entry;
    if (entry) this.tokens.delete(hash);
    return undefined;
  }

  set(token: string, entry: CachedToken): CachedToken {
    // Read before a revoke committed, stored after its announcement: not kept.
    if (revokedLately(this.core, entry.principal.connectionId)) return entry;
    const hash = hashToken(token);
    this.tokens.delete(hash);
    this.tokens.set(hash, entry);
    if (this.tokens.size > MAX_TOKENS) this.tokens.delete(this.tokens.keys().next().value!);
    return entry;
  }

  forgetToken(tokenHash: string): void {
    this.tokens.delete(tokenHash);
  }

  forgetConnection(connectionId: string): void {
    for (const [hash, entry] of this.tokens) if (entry.principal.connectionId === connectionId) this.tokens.delete(hash);
  }
}

const caches = new WeakMap<Core, OAuthTokenCache>();

/** The process's OAuth token cache (one per core). */
export function oauthTokenCache(core: Core): OAuthTokenCache {
  let cache = caches.get(core);
  if (!cache) caches.set(core, (cache = new OAuthTokenCache(core)));
  return cache;
}
