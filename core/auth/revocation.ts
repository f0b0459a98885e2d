import { and, eq, inArray, isNotNull } from "drizzle-orm";
import type { Core } from "../context.js";
import type { Executor } from "../db/database.js";
import { agentTokens } from "../db/schema/agent-tokens.js";
import { apiKeys } from "../db/schema/api-keys.js";
import { oauthConnections } from "../db/schema/oauth-connections.js";
import { relayTickets } from "../db/schema/relay-tickets.js";

/**
 * Announced when a credential is revoked, `{credential_id}` (a key_id, an agent token's
 * token_id, an OAuth connection's connection_id): every process drops it from its caches and ends what it opened (sockets, waits).
 */
export const CREDENTIAL_REVOKED_CHANNEL = "auth.credential_revoked";

/**
 * How long a process remembers a revocation it heard: longer than any gap between checking a
 * credential and watching it (an upgrade's or a tool call's database work), so a socket or wait
 * that checked its credential just before the revoke still ends.
 */
const REMEMBER_MS = 5 * 60_000;
const MAX_REMEMBERED = 10_000;

/**
 * Revokes in the caller's transaction what is tied to the credential beyond its own row: the
 * relay tickets it minted are deleted, and the revocation is announced when the transaction
 * commits. The caller has marked the credential's own row revoked in the same transaction.
 */
export async function revokeCredential(core: Core, tx: Executor, credentialId: string): Promise<void> {
  await tx.delete(relayTickets).where(eq(relayTickets.credentialId, credentialId));
  await core.bus.publish(CREDENTIAL_REVOKED_CHANNEL, { credential_id: credentialId }, { tx });
}

/** One process's watchers of live credentials, and the revocations it heard lately. */
class Revocations {
  private readonly watchers = new Map<string, Set<() => void>>();
  private readonly recent = new Map<string, number>();

  constructor(private readonly core: Core) {
    core.bus.subscribe(CREDENTIAL_REVOKED_CHANNEL, (message) => this.revoked(String(message.credential_id)));
    // Announcements sent while the bus was reconnecting were missed: ask the database.
    core.bus.onReconnect(() => void this.recheck().catch((error) => core.logger.error({ err: error }, "rechecking watched credentials failed")));
  }

  revoked(credentialId: string): void {
    const now = Date.now();
    this.recent.delete(credentialId);
    this.recent.set(credentialId, now);
    for (const [id, at] of this.recent) {
      if (now - at < REMEMBER_MS && this.recent.size <= MAX_REMEMBERED) break;
      this.recent.delete(id);
    }
    const watching = this.watchers.get(credentialId);
    this.watchers.delete(credentialId);
    watching?.forEach((onRevoked) => onRevoked());
  }

  revokedLately(credentialId: string): boolean {
    const at = this.recent.get(credentialId);
    return at !== undefined && Date.now() - at < REMEMBER_MS;
  }

  watch(credentialId: string, onRevoked: () => void): () => void {
    let live = true;
    const once = () => {
      if (live) (live = false), onRevoked();
    };
    if (this.revokedLately(credentialId)) {
      queueMicrotask(once);
      return () => void (live = false);
    }
    const set = this.watchers.get(credentialId) ?? new Set();
    this.watchers.set(credentialId, set.add(once));
    return () => {
      live = false;
      set.delete(once);
      if (set.size === 0 && this.watchers.get(credentialId) === set) this.watchers.delete(credentialId);
    };
  }

  private async recheck(): Promise<void> {
    const ids = [...this.watchers.keys()];
    if (ids.length === 0) return;
    const { db } = this.core;
    const keys = await db
      .select({ id: apiKeys.keyId })
      .from(apiKeys)
      .where(and(inArray(apiKeys.keyId, ids), isNotNull(apiKeys.revokedAt)));
    const tokens = await db
      .select({ id: agentTokens.tokenId })
      .from(agentTokens)
      .where(and(inArray(agentTokens.tokenId, ids), isNotNull(agentTokens.revokedAt)));
    const connections = await db
      .select({ id: oauthConnections.connectionId })
      .from(oauthConnections)
      .where(and(inArray(oauthConnections.connectionId, ids), isNotNull(oauthConnections.revokedAt)));
    for (const { id } of [...keys, ...tokens, ...connections]) this.revoked(id);
  }
}

const registries = new WeakMap<Core, Revocations>();

function revocations(core: Core): Revocations {
  let registry = registries.get(core);
  if (!registry) registries.set(core, (registry = new Revocations(core)));
  return registry;
}

/**
 * Calls onRevoked once when the credential is revoked, from any process (at once if it was
 * revoked lately). Whatever a credential opens that outlives its request (a socket, a long wait)
 * watches it. Returns the unwatch.
 */
export function watchCredential(core: Core, credentialId: string, onRevoked: () => void): () => void {
  return revocations(core).watch(credentialId, onRevoked);
}

/** Whether this process heard lately that the credential was revoked (a cache must not keep it). */
export function revokedLately(core: Core, credentialId: string): boolean {
  return revocations(core).revokedLately(credentialId);
}

/** Starts listening for revocations (the server does it at start, before any socket opens). */
export function listenForRevocations(core: Core): void {
  revocations(core);
}
