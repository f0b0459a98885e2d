import { and, desc, eq, isNull, lt, or } from "drizzle-orm";
import type { Core } from "../context.js";
import type { Executor } from "../db/database.js";
import { apiKeys } from "../db/schema/api-keys.js";
import { AppError, notFound } from "../errors.js";
import { newId } from "../ids.js";
import { type Page, type Pagination, toPage } from "../schemas/common.js";
import { keyCache } from "./key-cache.js";
import { revokeCredential } from "./revocation.js";
import type { ApiKey } from "./schemas.js";
import { hashToken, randomToken } from "./tokens.js";

/** Who a request acts for, once its API key has been checked. */
export interface ApiKeyPrincipal {
  accountId: string;
  keyId: string;
}

type KeyRow = typeof apiKeys.$inferSelect;

function present(row: KeyRow, currentKeyId?: string): ApiKey {
  return {
    key_id: row.keyId,
    name: row.name,
    prefix: row.prefix,
    last_four: row.lastFour,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    current: row.keyId === currentKeyId,
  };
}

/** Creates a key for the account; the returned `api_key` is the only time it is ever visible. */
export async function mintApiKey(db: Executor, accountId: string, name?: string | null) {
  const apiKey = randomToken("sk_");
  const [row] = await db
    .insert(apiKeys)
    .values({
      keyId: newId("key"),
      accountId,
      name: name ?? null,
      keyHash: hashToken(apiKey),
      prefix: apiKey.slice(0, 7),
      lastFour: apiKey.slice(-4),
    })
    .returning();
  return { ...present(row!), api_key: apiKey };
}

/** The account's live keys, newest first. */
export async function listApiKeys(core: Core, principal: ApiKeyPrincipal, page: Pagination): Promise<Page<ApiKey>> {
  const rows = await core.db
    .select()
    .from(apiKeys)
    .where(and(eq(apiKeys.accountId, principal.accountId), isNull(apiKeys.revokedAt)))
    .orderBy(desc(apiKeys.keyId))
    .limit(page.limit + 1)
    .offset(page.offset);
  return toPage(rows, page, (row) => present(row, principal.keyId));
}

/**
 * Revokes a key of the account at once, on every process: its relay tickets are deleted, and the
 * sockets and waits it opened end (core/auth/revocation.ts). The key making the request cannot
 * revoke itself.
 */
export async function revokeApiKey(core: Core, principal: ApiKeyPrincipal, keyId: string) {
  if (keyId === principal.keyId) {
    throw new AppError("cannot_revoke_current_key", "This request is authenticated by the key it asks to revoke. Revoke it with another key of the account.");
  }
  const revokedAt = core.now();
  const row = await core.db.transaction(async (tx) => {
    const [revoked] = await tx
      .update(apiKeys)
      .set({ revokedAt })
      .where(and(eq(apiKeys.keyId, keyId), eq(apiKeys.accountId, principal.accountId), isNull(apiKeys.revokedAt)))
      .returning({ keyId: apiKeys.keyId });
    // Every process's key cache drops it when this commits, and closes what it opened.
    if (revoked) await revokeCredential(core, tx, revoked.keyId);
    return revoked;
  });
  if (!row) throw notFound("API key", keyId);
  // This process's own cache at once, before the answer.
  keyCache(core).forgetKey(row.keyId);
  return { key_id: row.keyId, revoked: true as const, revoked_at: revokedAt.toISOString() };
}

// last_used_at is advisory: writing it at most once a minute keeps reads from becoming writes.
export const LAST_USED_RESOLUTION_MS = 60_000;

/** The principal behind a live API key, or null for an unknown or revoked one. */
export async function authenticateApiKey(core: Core, apiKey: string): Promise<ApiKeyPrincipal | null> {
  if (!apiKey.startsWith("sk_")) return null;
  const hash = hashToken(apiKey);
  const cache = keyCache(core);
  const now = core.now();
  let row = cache.get(hash, Date.now());
  if (!row) {
    const [found] = await core.db
      .select({ keyId: apiKeys.keyId, accountId: apiKeys.accountId, lastUsedAt: apiKeys.lastUsedAt })
      .from(apiKeys)
      .where(and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt)));
    if (!found) return null;
    cache.set(hash, (row = { accountId: found.accountId, credentialId: found.keyId, lastUsedAt: found.lastUsedAt, cachedAt: Date.now() }));
  }
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    const stale = new Date(now.getTime() - LAST_USED_RESOLUTION_MS);
    row.lastUsedAt = now;
    await core.db
      .update(apiKeys)
      .set({ lastUsedAt: now })
      .where(and(eq(apiKeys.keyId, row.credentialId), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, stale))));
  }
  return { accountId: row.accountId, keyId: row.credentialId };
}
