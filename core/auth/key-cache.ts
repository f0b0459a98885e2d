import type { Core } from "../context.js";

/** Announced when an API key is revoked, `{key_id}`: every process drops it from its cache at once. */
export const API_KEY_REVOKED_CHANNEL = "auth.key_revoked";

// A safety net only (revocations are announced): a cached key is looked up again after this.
const TTL_MS = 30_000;
const MAX_KEYS = 1_000;

interface CachedKey {
  accountId: string;
  keyId: string;
  lastUsedAt: Date | null;
  cachedAt: number;
}

/**
 * The live API keys this process checked lately, by the hash of the key, so a request costs no
 * lookup. A revocation is announced on the bus and drops the key in every process at once.
 */
export class KeyCache {
  private readonly keys = new Map<string, CachedKey>();

  constructor(core: Core) {
    core.bus.subscribe(API_KEY_REVOKED_CHANNEL, (message) => this.forgetKey(String(message.key_id)));
  }

  get(hash: string, now: number): CachedKey | undefined {
    const key = this.keys.get(hash);
    if (key && now - key.cachedAt < TTL_MS) return key;
    if (key) this.keys.delete(hash);
    return undefined;
  }

  set(hash: string, key: CachedKey): void {
    this.keys.delete(hash);
    this.keys.set(hash, key);
    if (this.keys.size > MAX_KEYS) this.keys.delete(this.keys.keys().next().value!);
  }

  forgetKey(keyId: string): void {
    for (const [hash, key] of this.keys) if (key.keyId === keyId) this.keys.delete(hash);
  }
}

const caches = new WeakMap<Core, KeyCache>();

/** The process's key cache (one per core). */
export function keyCache(core: Core): KeyCache {
  let cache = caches.get(core);
  if (!cache) caches.set(core, (cache = new KeyCache(core)));
  return cache;
}
