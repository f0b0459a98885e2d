import { and, eq, lt } from "drizzle-orm";
import type { Database } from "./db/database.js";
import { idempotencyKeys } from "./db/schema/idempotency-keys.js";
import { AppError } from "./errors.js";

/** Keys are remembered this long; after that the same key is a new request. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

export type IdempotencyStart = { kind: "new" } | { kind: "replay"; status: number; body: unknown };

/**
 * Claims a key for a request, or finds the answer it already got. The same key with another
 * request is a 409; a key whose first request is still running is a 409 too (retry shortly).
 */
export async function beginIdempotent(db: Database, scope: string, key: string, requestHash: string, now: Date): Promise<IdempotencyStart> {
  await db
    .delete(idempotencyKeys)
    .where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key), lt(idempotencyKeys.createdAt, new Date(now.getTime() - IDEMPOTENCY_TTL_MS))));
  const [claimed] = await db
    .insert(idempotencyKeys)
    .values({ scope, key, requestHash, status: "in_progress", createdAt: now })
    .onConflictDoNothing()
    .returning({ key: idempotencyKeys.key });
  if (claimed) return { kind: "new" };
  const [existing] = await db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
  if (!existing) return beginIdempotent(db, scope, key, requestHash, now);
  if (existing.requestHash !== requestHash) {
    throw new AppError("idempotency_conflict", `Idempotency-Key ${JSON.stringify(key)} was used for a different request. Use a new key for a new request.`);
  }
  if (existing.status === "in_progress") {
    throw new AppError("idempotency_conflict", `A request with Idempotency-Key ${JSON.stringify(key)} is still being processed. Retry in a moment.`);
  }
  return { kind: "replay", status: existing.responseStatus!, body: existing.responseBody };
}

/** Stores the answer a key's request got, for its retries. */
export async function finishIdempotent(db: Database, scope: string, key: string, status: number, body: unknown): Promise<void> {
  await db
    .update(idempotencyKeys)
    .set({ status: "done", responseStatus: status, responseBody: body ?? null })
    .where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
}

/** Forgets a key whose request failed in a way worth retrying (a 5xx, a 429). */
export async function releaseIdempotent(db: Database, scope: string, key: string): Promise<void> {
  await db.delete(idempotencyKeys).where(and(eq(idempotencyKeys.scope, scope), eq(idempotencyKeys.key, key)));
}
