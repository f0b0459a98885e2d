import type { Core } from "../context.js";
import { CREDENTIAL_REVOKED_CHANNEL, revokedLately } from "./revocation.js";

// A safety net only (revocations are announced): a cached credential is looked up again after this.
const TTL_MS = 30_000;
const MAX_KEYS = 1_000;

interface CachedKey {
  accountId: string;
  /** The credential's id: a key_id, or an agent token's token_id. */
  credentialId: string;
  lastUsedAt: Date | null;
  cachedAt: number;
}

/**
 * The live credentials of one kind (API keys, agent tokens) this process checked lately, by the
 * hash of the credential, so a request costs no lookup. A revocation is announced on the bus and
 * drops the credential in every process at once.
 */
export class KeyCache {
  private readonly keys = new Map<string, CachedKey>();

  constructor(private readonly core: Core) {
    core.bus.subscribe(CREDENTIAL_REVOKED_CHANNEL, (message) => this.forgetKey(String(message.credential_id)));
  }

  get(hash: string, now: number): CachedKey | undefined {
    const key = this.keys.get(hash);
    if (key && now - key.cachedAt < TTL_MS) return key;
    if (key) this.keys.delete(hash);
    return undefined;
  }

  set(hash: string, key: CachedKey): void {
    // Read before a revoke committed, stored after its announcement: not kept.
    if (revokedLately(this.core, key.credentialId)) return;
    this.keys.delete(hash);
    this.keys.set(hash, key);
    if (this.keys.size > MAX_KEYS) this.keys.delete(this.keys.keys().next().value!);
  }

  forgetKey(credentialId: string): void {
    for (const [hash, key] of this.keys) if (key.credentialId === credentialId) this.keys.delete(hash);
  }
}

const caches = { apiKeys: new WeakMap<Core, KeyCache>(), agentTokens: new WeakMap<Core, KeyCache>() };

function cacheOf(kind: keyof typeof caches, core: Core): KeyCache {
  let cache = caches[kind].get(core);
  if (!cache) caches[kind].set(core, (cache = new KeyCache(core)));
  return cache;
}

/** The process's API key cache (one per core). */
export function keyCache(core: Core): KeyCache {
  return cacheOf("apiKeys", core);
}

/** The process's agent token cache (one per core). */
export function agentTokenCache(core: Core): KeyCache {
  return cacheOf("agentTokens", core);
}
