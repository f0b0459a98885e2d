import { and, desc, eq, isNull, lt, or } from "drizzle-orm";
import type { Core } from "../context.js";
import type { Executor, Transaction } from "../db/database.js";
import { accounts } from "../db/schema/accounts.js";
import { agentTokens } from "../db/schema/agent-tokens.js";
import { AppError, notFound } from "../errors.js";
import { newId } from "../ids.js";
import { type Page, type Pagination, toPage } from "../schemas/common.js";
import { LAST_USED_RESOLUTION_MS } from "./api-keys.js";
import { agentTokenCache } from "./key-cache.js";
import { revokeCredential } from "./revocation.js";
import type { AgentToken } from "./schemas.js";
import { hashToken, randomToken } from "./tokens.js";

/** Who a request acts for, once its agent token has been checked. */
export interface AgentTokenPrincipal {
  accountId: string;
  tokenId: string;
}

/** The credential a management request came with: it may not revoke itself, and it mints what it mints. */
export interface Actor {
  accountId: string;
  kind: "api_key" | "agent_token";
  /** Its key_id or token_id. */
  id: string;
}

/** Who minted a token: a wallet's payment, an API key, or another agent token of the account. */
export interface Minter {
  kind: "wallet" | "api_key" | "agent_token";
  id: string;
}

type TokenRow = typeof agentTokens.$inferSelect;

function present(row: TokenRow, currentTokenId?: string): AgentToken {
  return {
    token_id: row.tokenId,
    name: row.name,
    prefix: row.prefix,
    last_four: row.lastFour,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    minted_by: { kind: row.mintedByKind as Minter["kind"], id: row.mintedById },
    current: row.tokenId === currentTokenId,
  };
}

/**
 * Mints a random agent token (`at_...`) for the account; the returned `agent_token` is the only
 * time it is ever visible (only its hash is kept).
 */
export async function mintAgentToken(db: Executor, accountId: string, mintedBy: Minter, name?: string | null) {
  const token = randomToken("at_");
  const [row] = await db
    .insert(agentTokens)
    .values({
      tokenId: newId("atk"),
      accountId,
      name: name ?? null,
      tokenHash: hashToken(token),
      prefix: token.slice(0, 7),
      lastFour: token.slice(-4),
      mintedByKind: mintedBy.kind,
      mintedById: mintedBy.id,
    })
    .returning();
  return { ...present(row!), agent_token: token };
}

/**
 * A token for a wallet's account that has no live one, minted by the wallet; null when it has
 * one (the wallet holds it: a refused paid request must not mint a token each time). The
 * account's row is locked, so concurrent refusals mint one between them.
 */
export async function mintFirstAgentToken(tx: Transaction, accountId: string, walletAddress: string): Promise<string | null> {
  await tx.select({ accountId: accounts.accountId }).from(accounts).where(eq(accounts.accountId, accountId)).for("update");
  const [live] = await tx
    .select({ tokenId: agentTokens.tokenId })
    .from(agentTokens)
    .where(and(eq(agentTokens.accountId, accountId), isNull(agentTokens.revokedAt)))
    .limit(1);
  if (live) return null;
  return (await mintAgentToken(tx, accountId, { kind: "wallet", id: walletAddress })).agent_token;
}

/** The account's live agent tokens, newest first. */
export async function listAgentTokens(core: Core, actor: Actor, page: Pagination): Promise<Page<AgentToken>> {
  const rows = await core.db
    .select()
    .from(agentTokens)
    .where(and(eq(agentTokens.accountId, actor.accountId), isNull(agentTokens.revokedAt)))
    .orderBy(desc(agentTokens.tokenId))
    .limit(page.limit + 1)
    .offset(page.offset);
  return toPage(rows, page, (row) => present(row, actor.kind === "agent_token" ? actor.id : undefined));
}

/** Marks a live token of the account revoked, in tx, with everything it opened; undefined when there is none. */
async function revokeIn(core: Core, tx: Transaction, accountId: string, tokenId: string, revokedAt: Date) {
  const [revoked] = await tx
    .update(agentTokens)
    .set({ revokedAt })
    .where(and(eq(agentTokens.tokenId, tokenId), eq(agentTokens.accountId, accountId), isNull(agentTokens.revokedAt)))
    .returning();
  // Every process's token cache drops it when this commits, and closes what it opened.
  if (revoked) await revokeCredential(core, tx, revoked.tokenId);
  return revoked;
}

/**
 * Revokes an agent token of the account at once, on every process: the sockets and waits it
 * opened end. The token making the request cannot revoke itself (it can rotate itself).
 */
export async function revokeAgentToken(core: Core, actor: Actor, tokenId: string) {
  if (actor.kind === "agent_token" && tokenId === actor.id) {
    throw new AppError(
      "cannot_revoke_current_key",
      "This request is authenticated by the agent token it asks to revoke. Revoke it with another credential of the account, or rotate it (POST /v1/auth/agent-tokens/{token_id}/rotate).",
    );
  }
  const revokedAt = core.now();
  const row = await core.db.transaction((tx) => revokeIn(core, tx, actor.accountId, tokenId, revokedAt));
  if (!row) throw notFound("agent token", tokenId);
  // This process's own cache at once, before the answer.
  agentTokenCache(core).forgetKey(row.tokenId);
  return { token_id: row.tokenId, revoked: true as const, revoked_at: revokedAt.toISOString() };
}

/**
 * Replaces a token: a new one (same name, minted by the requesting credential) and the old one
 * revoked, in one transaction. The new token is in the answer, once.
 */
export async function rotateAgentToken(core: Core, actor: Actor, tokenId: string) {
  const revokedAt = core.now();
  const minted = await core.db.transaction(async (tx) => {
    const old = await revokeIn(core, tx, actor.accountId, tokenId, revokedAt);
    if (!old) throw notFound("agent token", tokenId);
    return mintAgentToken(tx, actor.accountId, { kind: actor.kind, id: actor.id }, old.name);
  });
  agentTokenCache(core).forgetKey(tokenId);
  return minted;
}

/** The principal behind a live agent token, or null for an unknown or revoked one. */
export async function authenticateAgentToken(core: Core, token: string): Promise<AgentTokenPrincipal | null> {
  if (!token.startsWith("at_")) return null;
  const hash = hashToken(token);
  const cache = agentTokenCache(core);
  const now = core.now();
  let row = cache.get(hash, Date.now());
  if (!row) {
    const [found] = await core.db
      .select({ tokenId: agentTokens.tokenId, accountId: agentTokens.accountId, lastUsedAt: agentTokens.lastUsedAt })
      .from(agentTokens)
      .where(and(eq(agentTokens.tokenHash, hash), isNull(agentTokens.revokedAt)));
    if (!found) return null;
    cache.set(hash, (row = { accountId: found.accountId, credentialId: found.tokenId, lastUsedAt: found.lastUsedAt, cachedAt: Date.now() }));
  }
  // last_used_at is advisory, written at most once a minute as for API keys. A token issued
  // before tokens were listed gets its prefix and last four here (only its hash was kept).
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    const stale = new Date(now.getTime() - LAST_USED_RESOLUTION_MS);
    row.lastUsedAt = now;
    await core.db
      .update(agentTokens)
      .set({ lastUsedAt: now, prefix: token.slice(0, 7), lastFour: token.slice(-4) })
      .where(and(eq(agentTokens.tokenId, row.credentialId), or(isNull(agentTokens.lastUsedAt), lt(agentTokens.lastUsedAt, stale))));
  }
  return { accountId: row.accountId, tokenId: row.credentialId };
}
