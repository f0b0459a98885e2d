import { and, desc, eq, gt, isNull, lt, or } from "drizzle-orm";
import { revokeCredential } from "../auth/revocation.js";
import { hashToken } from "../auth/tokens.js";
import type { Core } from "../context.js";
import { oauthConnections } from "../db/schema/oauth-connections.js";
import { oauthRecords } from "../db/schema/oauth-records.js";
import { notFound } from "../errors.js";
import { type Page, type Pagination, toPage } from "../schemas/common.js";
import type { Connection } from "./schemas.js";

export type { OAuthPrincipal } from "./principal.js";

import type { OAuthPrincipal } from "./principal.js";
import { knownScopes } from "./scopes.js";
import { oauthTokenCache } from "./token-cache.js";

type ConnectionRow = typeof oauthConnections.$inferSelect;

function present(row: ConnectionRow): Connection {
  return {
    connection_id: row.connectionId,
    client_id: row.clientId,
    client_name: row.clientName,
    redirect_host: row.redirectHost,
    scopes: knownScopes(row.scope),
    agent_id: row.agentId,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    expires_at: row.expiresAt.toISOString(),
  };
}

/** Records a connection when the person allows a client (its grant is saved under the same id). */
export async function recordConnection(core: Core, row: Omit<ConnectionRow, "createdAt" | "lastUsedAt" | "revokedAt">): Promise<void> {
  await core.db
    .insert(oauthConnections)
    .values({ ...row, createdAt: core.now() })
    .onConflictDoUpdate({ target: oauthConnections.connectionId, set: { scope: row.scope, agentId: row.agentId, expiresAt: row.expiresAt } });
}

/** The account's live connections, newest first. */
export async function listConnections(core: Core, accountId: string, page: Pagination): Promise<Page<Connection>> {
  const rows = await core.db
    .select()
    .from(oauthConnections)
    .where(and(eq(oauthConnections.accountId, accountId), isNull(oauthConnections.revokedAt), gt(oauthConnections.expiresAt, core.now())))
    .orderBy(desc(oauthConnections.connectionId))
    .limit(page.limit + 1)
    .offset(page.offset);
  return toPage(rows, page, present);
}

/** Disconnects one of the account's clients: its tokens stop working on every process at once. */
export async function disconnect(core: Core, accountId: string, connectionId: string) {
  const [row] = await core.db
    .select({ connectionId: oauthConnections.connectionId })
    .from(oauthConnections)
    .where(and(eq(oauthConnections.connectionId, connectionId), eq(oauthConnections.accountId, accountId), isNull(oauthConnections.revokedAt)));
  if (!row) throw notFound("Connection", connectionId);
  const at = await endConnection(core, connectionId);
  return { connection_id: connectionId, disconnected: true as const, disconnected_at: at.toISOString() };
}

/**
 * Ends a connection however it ends (disconnected by the account, revoked by the client, a
 * reused refresh token): marks it revoked, deletes its grant, codes and tokens, and revokes it as a
 * credential (core/auth/revocation.ts) once that commits: every process forgets its cached tokens
 * and ends the waits opened with them.
 */
export async function endConnection(core: Core, connectionId: string): Promise<Date> {
  const at = core.now();
  await core.db.transaction(async (tx) => {
    await tx
      .update(oauthConnections)
      .set({ revokedAt: at })
      .where(and(eq(oauthConnections.connectionId, connectionId), isNull(oauthConnections.revokedAt)));
    await tx
      .delete(oauthRecords)
      .where(or(eq(oauthRecords.grantId, connectionId), and(eq(oauthRecords.kind, "Grant"), eq(oauthRecords.idHash, hashToken(connectionId)))));
    // Like a revoked key: every process forgets its tokens and ends what it holds open with them.
    await revokeCredential(core, tx, connectionId);
  });
  oauthTokenCache(core).forgetConnection(connectionId);
  return at;
}

/** What the authorization server knows of an access token, read through its own library. */
export interface AccessTokenFacts {
  connectionId: string;
  accountId: string;
  scope: string;
  /** Epoch seconds. */
  expiresAt: number;
}

// last_used_at is advisory: written at most once a minute, like an API key's.
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * The principal behind an OAuth access token, or null when the token is unknown, expired, or
 * its connection ended. `read` asks the authorization server about a token this process has not
 * seen lately (and checks that it was minted for this resource); the answer is cached by the
 * token's hash until the token expires, or its connection ends on any process.
 */
export async function authenticateOAuthToken(
  core: Core,
  token: string,
  read: (token: string) => Promise<AccessTokenFacts | undefined>,
): Promise<OAuthPrincipal | null> {
  const cache = oauthTokenCache(core);
  const now = core.now();
  let entry = cache.get(token, Date.now());
  if (!entry) {
    const facts = await read(token);
    if (!facts) return null;
    const [connection] = await core.db
      .select()
      .from(oauthConnections)
      .where(and(eq(oauthConnections.connectionId, facts.connectionId), eq(oauthConnections.accountId, facts.accountId), isNull(oauthConnections.revokedAt)));
    if (!connection) return null;
    const principal: OAuthPrincipal = {
      accountId: connection.accountId,
      connectionId: connection.connectionId,
      scopes: knownScopes(facts.scope),
      agentId: connection.agentId,
    };
    entry = cache.set(token, { principal, expiresAtMs: facts.expiresAt * 1000, lastUsedAt: connection.lastUsedAt, cachedAt: Date.now() });
  }
  if (entry.expiresAtMs <= now.getTime()) return null;
  if (!entry.lastUsedAt || now.getTime() - entry.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    entry.lastUsedAt = now;
    const stale = new Date(now.getTime() - LAST_USED_RESOLUTION_MS);
    await core.db
      .update(oauthConnections)
      .set({ lastUsedAt: now })
      .where(
        and(eq(oauthConnections.connectionId, entry.principal.connectionId), or(isNull(oauthConnections.lastUsedAt), lt(oauthConnections.lastUsedAt, stale))),
      );
  }
  return entry.principal;
}

/** A live connection by its id (also its grant's), or undefined. */
export async function findConnection(core: Core, connectionId: string): Promise<ConnectionRow | undefined> {
  const [row] = await core.db
    .select()
    .from(oauthConnections)
    .where(and(eq(oauthConnections.connectionId, connectionId), isNull(oauthConnections.revokedAt), gt(oauthConnections.expiresAt, core.now())));
  return row;
}
