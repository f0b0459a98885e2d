import { and, eq, isNotNull, lt } from "drizzle-orm";
import { hashToken } from "../auth/tokens.js";
import type { Core } from "../context.js";
import { oauthRecords } from "../db/schema/oauth-records.js";

/**
 * The OAuth authorization server's records as rows (core/db/schema/oauth-records.ts): the
 * storage its adapter (gateway/oauth/adapter.ts) writes through. A record is looked up by the
 * hash of its id; its payload is kept without the id, so a token or code never rests in the
 * database. Records past their expiry read as absent and are swept as new ones are written.
 */

type Payload = Record<string, unknown>;

// Sweeping on every write would cost a statement per token; once a minute per process is enough.
const SWEEP_INTERVAL_MS = 60_000;
const lastSweep = new WeakMap<Core, number>();

/** Writes a record (a new one, or a new state of it), `expiresInSeconds` from now. */
export async function saveOAuthRecord(core: Core, kind: string, id: string, payload: Payload, expiresInSeconds: number | undefined): Promise<void> {
  const now = core.now();
  const row = {
    payload: withoutSecrets(payload),
    grantId: typeof payload.grantId === "string" ? payload.grantId : null,
    uidHash: typeof payload.uid === "string" && kind === "Session" ? hashToken(payload.uid) : null,
    expiresAt: expiresInSeconds === undefined ? null : new Date(now.getTime() + expiresInSeconds * 1000),
    ...(typeof payload.consumed === "number" ? { consumedAt: new Date(payload.consumed * 1000) } : {}),
  };
  await core.db
    .insert(oauthRecords)
    .values({ kind, idHash: hashToken(id), ...row })
    .onConflictDoUpdate({ target: [oauthRecords.kind, oauthRecords.idHash], set: row });
  await sweepExpired(core, now);
}

/** The record, with its id and use put back as the server wrote them, or undefined when absent or expired. */
export async function findOAuthRecord(core: Core, kind: string, id: string): Promise<Payload | undefined> {
  const [row] = await core.db
    .select()
    .from(oauthRecords)
    .where(and(eq(oauthRecords.kind, kind), eq(oauthRecords.idHash, hashToken(id))));
  return present(core, row, id);
}

/** A session by its uid (an interaction knows its session by that). */
export async function findOAuthSessionByUid(core: Core, uid: string): Promise<Payload | undefined> {
  const [row] = await core.db
    .select()
    .from(oauthRecords)
    .where(and(eq(oauthRecords.kind, "Session"), eq(oauthRecords.uidHash, hashToken(uid))));
  return present(core, row, undefined);
}

/** Marks a code or refresh token used; the server refuses it from then on (and revokes its grant if it comes back). */
export async function consumeOAuthRecord(core: Core, kind: string, id: string): Promise<void> {
  await core.db
    .update(oauthRecords)
    .set({ consumedAt: core.now() })
    .where(and(eq(oauthRecords.kind, kind), eq(oauthRecords.idHash, hashToken(id))));
}

/** Deletes one record. */
export async function deleteOAuthRecord(core: Core, kind: string, id: string): Promise<void> {
  await core.db.delete(oauthRecords).where(and(eq(oauthRecords.kind, kind), eq(oauthRecords.idHash, hashToken(id))));
}

/** Deletes the records of one kind that belong to a grant. */
export async function deleteOAuthRecordsOfGrant(core: Core, kind: string, grantId: string): Promise<void> {
  await core.db.delete(oauthRecords).where(and(eq(oauthRecords.kind, kind), eq(oauthRecords.grantId, grantId)));
}

function present(core: Core, row: typeof oauthRecords.$inferSelect | undefined, id: string | undefined): Payload | undefined {
  if (!row || (row.expiresAt && row.expiresAt <= core.now())) return undefined;
  const payload: Payload = { ...row.payload };
  // A session found by its uid comes without its id: that is the browser's cookie, never stored.
  if (id !== undefined) payload.jti = id;
  if (row.consumedAt) payload.consumed = Math.floor(row.consumedAt.getTime() / 1000);
  return payload;
}

/**
 * The payload as stored: without its id (the token itself, for tokens and codes) and without the
 * copy of the browser's session cookie an interaction carries (which nothing reads back).
 */
function withoutSecrets(payload: Payload): Payload {
  const { jti: _id, consumed: _consumed, ...rest } = payload;
  const session = rest.session as Payload | undefined;
  if (session && typeof session === "object" && "cookie" in session) {
    const { cookie: _cookie, ...kept } = session;
    rest.session = kept;
  }
  return rest;
}

async function sweepExpired(core: Core, now: Date): Promise<void> {
  const last = lastSweep.get(core) ?? 0;
  if (now.getTime() - last < SWEEP_INTERVAL_MS) return;
  lastSweep.set(core, now.getTime());
  await core.db.delete(oauthRecords).where(and(isNotNull(oauthRecords.expiresAt), lt(oauthRecords.expiresAt, now)));
}
