import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { KeyCache, keyCache } from "../../core/auth/key-cache.js";
import { CREDENTIAL_REVOKED_CHANNEL, revokedLately } from "../../core/auth/revocation.js";
import { startTestService, type TestService } from "../support/service.js";

// The cache's limits (private constants of core/auth/key-cache.ts).
const TTL_MS = 30_000;
const MAX_KEYS = 1_000;

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const entry = (credentialId: string, cachedAt: number) => ({ accountId: "acct_test", credentialId, lastUsedAt: null, cachedAt });

describe("the API key cache", () => {
  it("keeps a key for just under 30 s and drops it at exactly 30 s", () => {
    const cache = new KeyCache(service.core);
    const key = entry("key_ttl", 1_000);
    cache.set("hash-ttl", key);
    expect(cache.get("hash-ttl", 1_000)).toBe(key);
    expect(cache.get("hash-ttl", 1_000 + TTL_MS - 1)).toBe(key);
    expect(cache.get("hash-ttl", 1_000 + TTL_MS)).toBeUndefined();
    // Dropped, not just hidden: an earlier clock does not bring it back.
    expect(cache.get("hash-ttl", 1_000)).toBeUndefined();
  });

  it("answers undefined for a hash it never saw", () => {
    expect(new KeyCache(service.core).get("never-set", 0)).toBeUndefined();
  });

  it(`holds at most ${MAX_KEYS} keys, dropping the least recently stored first`, () => {
    const cache = new KeyCache(service.core);
    for (let i = 0; i < MAX_KEYS; i++) cache.set(`hash-${i}`, entry(`key_${i}`, 0));
    // Exactly at the cap nothing is dropped.
    expect(cache.get("hash-0", 0)).toBeDefined();
    expect(cache.get(`hash-${MAX_KEYS - 1}`, 0)).toBeDefined();
    // Storing hash-0 again makes it the newest; hash-1 is now the oldest.
    cache.set("hash-0", entry("key_0", 0));
    cache.set("one-more", entry("key_more", 0));
    expect(cache.get("hash-1", 0)).toBeUndefined();
    expect(cache.get("hash-0", 0)).toBeDefined();
    expect(cache.get("hash-2", 0)).toBeDefined();
    expect(cache.get("one-more", 0)).toBeDefined();
  });

  it("forgets every hash of a key id, and only those", () => {
    const cache = new KeyCache(service.core);
    cache.set("a1", entry("key_a", 0));
    cache.set("a2", entry("key_a", 0));
    cache.set("b1", entry("key_b", 0));
    cache.forgetKey("key_a");
    expect(cache.get("a1", 0)).toBeUndefined();
    expect(cache.get("a2", 0)).toBeUndefined();
    expect(cache.get("b1", 0)).toBeDefined();
  });

  it("drops a key announced as revoked on the bus, and keeps the others", async () => {
    const cache = new KeyCache(service.core);
    cache.set("revoked-hash", entry("key_revoked", Date.now()));
    cache.set("kept-hash", entry("key_kept", Date.now()));
    await service.core.bus.publish(CREDENTIAL_REVOKED_CHANNEL, { credential_id: "key_revoked" });
    await vi.waitFor(() => expect(cache.get("revoked-hash", Date.now())).toBeUndefined());
    expect(cache.get("kept-hash", Date.now())).toBeDefined();
  });

  it("does not keep a key whose revoke it heard lately: it was read before the revoke committed", async () => {
    const cache = new KeyCache(service.core);
    await service.core.bus.publish(CREDENTIAL_REVOKED_CHANNEL, { credential_id: "key_read_before_revoke" });
    await vi.waitFor(() => expect(revokedLately(service.core, "key_read_before_revoke")).toBe(true));
    cache.set("late-hash", entry("key_read_before_revoke", Date.now()));
    expect(cache.get("late-hash", Date.now())).toBeUndefined();
  });

  it("is one cache per core", () => {
    const cache = keyCache(service.core);
    expect(keyCache(service.core)).toBe(cache);
    cache.set("shared-hash", entry("key_shared", Date.now()));
    expect(keyCache(service.core).get("shared-hash", Date.now())).toBeDefined();
  });
});
