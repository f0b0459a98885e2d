import { eq, inArray } from "drizzle-orm";
import type { Transaction } from "../db/database.js";
import { rateLimits } from "../db/schema/rate-limits.js";
import { AppError } from "../errors.js";

/** One limit: at most `limit` requests per `windowMs` for `key`. */
export interface RateLimitRule {
  key: string;
  limit: number;
  windowMs: number;
  /** What the 429 says is limited, e.g. "sign-in codes for this address". */
  label: string;
}

/**
 * Counts one request against every rule, or throws 429 (with Retry-After) without counting it
 * when any rule is already at its limit. The rows are locked for the transaction, so concurrent
 * requests in any process are counted one after another. Rules are locked in key order so two
 * requests never wait on each other's locks.
 */
export async function consumeRateLimits(tx: Transaction, rules: RateLimitRule[], now: Date): Promise<void> {
  const sorted = [...rules].sort((a, b) => a.key.localeCompare(b.key));
  const keys = sorted.map((r) => r.key);
  await tx
    .insert(rateLimits)
    .values(keys.map((key) => ({ key })))
    .onConflictDoNothing();
  const rows = await tx.select().from(rateLimits).where(inArray(rateLimits.key, keys)).orderBy(rateLimits.key).for("update");
  const ms = now.getTime();

  const pruned = new Map<string, number[]>();
  for (const rule of sorted) {
    const hits = (rows.find((r) => r.key === rule.key)?.hits ?? []).filter((t) => t > ms - rule.windowMs);
    if (hits.length >= rule.limit) {
      const retryAfter = Math.max(1, Math.ceil((Math.min(...hits) + rule.windowMs - ms) / 1000));
      throw new AppError("rate_limited", `Too many ${rule.label}: at most ${rule.limit} per ${rule.windowMs / 60_000} minutes. Try again in ${retryAfter} s.`, {
        headers: { "Retry-After": String(retryAfter) },
        extra: { retry_after: retryAfter },
      });
    }
    pruned.set(rule.key, hits);
  }
  for (const rule of sorted) {
    await tx
      .update(rateLimits)
      .set({ hits: [...pruned.get(rule.key)!, ms] })
      .where(eq(rateLimits.key, rule.key));
  }
}
