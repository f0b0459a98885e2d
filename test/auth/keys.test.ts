import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { authenticateApiKey, listApiKeys, mintApiKey, revokeApiKey } from "../../core/auth/api-keys.js";
import { keyCache } from "../../core/auth/key-cache.js";
import { CREDENTIAL_REVOKED_CHANNEL } from "../../core/auth/revocation.js";
import { hashToken } from "../../core/auth/tokens.js";
import { apiKeys } from "../../core/db/schema/api-keys.js";
import type { AppError } from "../../core/errors.js";
import { newId } from "../../core/ids.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";

// API keys (core/auth/api-keys.ts): minted, listed, revoked and used through the API, then each
// operation's edges through its function: the prefix and last four, paging, the refusals' words,
// the revocation on the bus, and when authenticating writes last_used_at. The key cache itself is
// in key-cache.test.ts.
let service: TestService;
let owner: TestAccount;
let api: Api;
let realNow: () => Date;

beforeAll(async () => {
  service = await startTestService();
  owner = await createAccount(service.core);
  api = new Api(service.baseUrl, owner.apiKey);
  realNow = service.core.now;
});
afterEach(() => {
  service.core.now = realNow;
});
afterAll(() => service?.stop());

const principalOf = (a: TestAccount) => ({ accountId: a.accountId, keyId: a.keyId });
const setNow = (ms: number) => {
  service.core.now = () => new Date(ms);
};
async function lastUsedInDb(keyId: string): Promise<number | undefined> {
  const [row] = await service.core.db.select({ at: apiKeys.lastUsedAt }).from(apiKeys).where(eq(apiKeys.keyId, keyId));
  return row!.at?.getTime();
}
const cachedLastUsed = (apiKey: string) => keyCache(service.core).get(hashToken(apiKey), Date.now())?.lastUsedAt?.getTime();
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable("expected a refusal"),
    (e: AppError) => e,
  );

describe("API keys", () => {
  it("mints a named key shown once, which then works and is listed without the secret", async () => {
    const minted = await api.post("/v1/auth/keys", { name: "deploy" });
    expect(minted.status).toBe(201);
    expect(minted.body).toMatchObject({ name: "deploy", current: false, last_used_at: null });
    expect(minted.body.api_key.startsWith(minted.body.prefix)).toBe(true);
    expect(minted.body.api_key.endsWith(minted.body.last_four)).toBe(true);

    const used = await api.get("/v1/auth/keys", { key: minted.body.api_key });
    expect(used.status).toBe(200);
    expect(used.text).not.toContain(minted.body.api_key);
    const entry = used.body.data.find((k: any) => k.key_id === minted.body.key_id);
    expect(entry).toMatchObject({ name: "deploy", current: true });
    expect(entry.last_used_at).not.toBeNull();
    expect(used.body.data.find((k: any) => k.key_id === owner.keyId)).toMatchObject({ current: false });
  });

  it("mints a key with no body at all", async () => {
    const res = await api.request("POST", "/v1/auth/keys");
    expect(res.status).toBe(201);
    expect(res.body.name).toBeNull();
  });

  it("revokes another key at once, and a second revoke is a 404", async () => {
    const { body: spare } = await api.post("/v1/auth/keys", { name: "spare" });
    expect((await api.get("/v1/agents", { key: spare.api_key })).status).toBe(200);
    const revoked = await api.delete(`/v1/auth/keys/${spare.key_id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ key_id: spare.key_id, revoked: true });
    expect((await api.get("/v1/agents", { key: spare.api_key })).status).toBe(401);
    expect((await api.get("/v1/auth/keys")).body.data.map((k: any) => k.key_id)).not.toContain(spare.key_id);
    expect((await api.delete(`/v1/auth/keys/${spare.key_id}`)).status).toBe(404);
  });

  it("refuses to let a key revoke itself", async () => {
    const res = await api.delete(`/v1/auth/keys/${owner.keyId}`);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe("cannot_revoke_current_key");
    expect((await api.get("/v1/agents")).status).toBe(200);
  });

  it("answers 404 for another account's key and leaves it working", async () => {
    const other = await createAccount(service.core);
    const res = await api.delete(`/v1/auth/keys/${other.keyId}`);
    expect(res.status).toBe(404);
    expect((await api.get("/v1/agents", { key: other.apiKey })).status).toBe(200);
    expect((await api.get("/v1/auth/keys")).body.data.map((k: any) => k.key_id)).not.toContain(other.keyId);
  });

  it("validates the key name", async () => {
    const res = await api.post("/v1/auth/keys", { name: "x".repeat(101) });
    expect(res.status).toBe(422);
    expect(res.body.errors[0].field).toBe("name");
  });
});

describe("minting", () => {
  it("stores the first seven characters as prefix and exactly the last four as last_four", async () => {
    const account = await createAccount(service.core);
    const minted = await mintApiKey(service.core.db, account.accountId, "pinned");
    expect(minted.prefix).toBe(minted.api_key.slice(0, 7));
    expect(minted.last_four).toHaveLength(4);
    expect(minted.last_four).toBe(minted.api_key.slice(-4));
  });
});

describe("listing", () => {
  it("says has_more exactly when a key lies beyond the page", async () => {
    const account = await createAccount(service.core);
    await mintApiKey(service.core.db, account.accountId, "second");
    await mintApiKey(service.core.db, account.accountId, "third");
    const first = await listApiKeys(service.core, principalOf(account), { limit: 2, offset: 0 });
    expect(first.data).toHaveLength(2);
    expect(first.has_more).toBe(true);
    const whole = await listApiKeys(service.core, principalOf(account), { limit: 3, offset: 0 });
    expect(whole.data).toHaveLength(3);
    expect(whole.has_more).toBe(false);
    const last = await listApiKeys(service.core, principalOf(account), { limit: 2, offset: 2 });
    expect(last.data).toHaveLength(1);
    expect(last.has_more).toBe(false);
  });
});

describe("revoking", () => {
  it("refuses the key revoking itself, saying to use another key", async () => {
    const account = await createAccount(service.core);
    const error = await failure(revokeApiKey(service.core, principalOf(account), account.keyId));
    expect(error.code).toBe("cannot_revoke_current_key");
    expect(error.detail).toBe("This request is authenticated by the key it asks to revoke. Revoke it with another key of the account.");
  });

  it("answers 404 naming the API key for an unknown id", async () => {
    const account = await createAccount(service.core);
    const error = await failure(revokeApiKey(service.core, principalOf(account), "key_nope"));
    expect(error.code).toBe("not_found");
    expect(error.detail).toBe('No API key with id "key_nope" exists on this account.');
  });

  it("announces the revoked key id on the bus", async () => {
    const account = await createAccount(service.core);
    const spare = await mintApiKey(service.core.db, account.accountId, "spare");
    const heard: Record<string, unknown>[] = [];
    const unsubscribe = service.core.bus.subscribe(CREDENTIAL_REVOKED_CHANNEL, (message) => void heard.push(message));
    try {
      await revokeApiKey(service.core, principalOf(account), spare.key_id);
      await expect.poll(() => heard).toContainEqual({ credential_id: spare.key_id });
    } finally {
      unsubscribe();
    }
    expect(await authenticateApiKey(service.core, spare.api_key)).toBeNull();
  });
});

describe("authenticating", () => {
  it("never takes a string without the sk_ prefix for an API key, even one whose hash is stored", async () => {
    const account = await createAccount(service.core);
    const notAKey = `at_${randomBytes(16).toString("hex")}`;
    await service.core.db
      .insert(apiKeys)
      .values({ keyId: newId("key"), accountId: account.accountId, keyHash: hashToken(notAKey), prefix: "at_", lastFour: notAKey.slice(-4) });
    expect(await authenticateApiKey(service.core, notAKey)).toBeNull();
    expect(await authenticateApiKey(service.core, account.apiKey)).toEqual(principalOf(account));
  });

  it("answers a checked key from the cache, without looking it up again", async () => {
    const account = await createAccount(service.core);
    expect(await authenticateApiKey(service.core, account.apiKey)).toEqual(principalOf(account));
    // Revoked behind the cache's back (no announcement): the cached key still answers until its TTL.
    await service.core.db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.keyId, account.keyId));
    expect(await authenticateApiKey(service.core, account.apiKey)).toEqual(principalOf(account));
    keyCache(service.core).forgetKey(account.keyId);
    expect(await authenticateApiKey(service.core, account.apiKey)).toBeNull();
  });

  it("writes last_used_at on first use, then again only once more than 60 s have passed", async () => {
    const account = await createAccount(service.core);
    const t0 = Date.parse("2030-01-01T00:00:00Z");
    setNow(t0);
    await authenticateApiKey(service.core, account.apiKey);
    expect(await lastUsedInDb(account.keyId)).toBe(t0);
    expect(cachedLastUsed(account.apiKey)).toBe(t0);

    setNow(t0 + 60_000);
    await authenticateApiKey(service.core, account.apiKey);
    expect(cachedLastUsed(account.apiKey)).toBe(t0);
    expect(await lastUsedInDb(account.keyId)).toBe(t0);

    setNow(t0 + 60_001);
    await authenticateApiKey(service.core, account.apiKey);
    expect(cachedLastUsed(account.apiKey)).toBe(t0 + 60_001);
    expect(await lastUsedInDb(account.keyId)).toBe(t0 + 60_001);
  });

  it("within the minute writes nothing, whatever the stored value", async () => {
    const account = await createAccount(service.core);
    const t0 = Date.parse("2030-02-01T00:00:00Z");
    setNow(t0);
    await authenticateApiKey(service.core, account.apiKey);
    const old = t0 - 3_600_000;
    await service.core.db
      .update(apiKeys)
      .set({ lastUsedAt: new Date(old) })
      .where(eq(apiKeys.keyId, account.keyId));
    setNow(t0 + 1_000);
    await authenticateApiKey(service.core, account.apiKey);
    expect(await lastUsedInDb(account.keyId)).toBe(old);
  });

  it("does not overwrite a last_used_at another process wrote within the minute", async () => {
    const account = await createAccount(service.core);
    const t0 = Date.parse("2030-03-01T00:00:00Z");
    setNow(t0);
    await authenticateApiKey(service.core, account.apiKey);
    // Another process (its own cache) used the key 59 s later.
    await service.core.db
      .update(apiKeys)
      .set({ lastUsedAt: new Date(t0 + 59_000) })
      .where(eq(apiKeys.keyId, account.keyId));
    setNow(t0 + 60_001);
    await authenticateApiKey(service.core, account.apiKey);
    expect(await lastUsedInDb(account.keyId)).toBe(t0 + 59_000);
  });
});
