import { setTimeout as sleep } from "node:timers/promises";
import type { Core } from "../../core/context.js";
import { AppError } from "../../core/errors.js";
import { accountCounter } from "../../core/limits.js";
import { setScopeAccount } from "../../core/request-scope.js";
import { accountOf, type Caller } from "./principal.js";

/**
 * How long a request beyond account_requests waits for its 429, as long as its Retry-After. A
 * refusal answered at once was answered again at once: 1,000 connections of one account kept the
 * process busy refusing 4,600 requests a second, and another tenant's GET, waiting its turn among
 * those connections, took 435 ms. Held a second, each connection costs one refusal a second.
 */
const REFUSAL_DELAY_MS = 1_000;

/**
 * The admit step: counts the request among its account's requests in flight in this process (a
 * 429 naming account_requests beyond config.limits.accountRequests, answered after
 * REFUSAL_DELAY_MS), and marks the request scope with the account, so its database work takes
 * that account's turn. A request that names no account (a push token; an unpaid one, before its
 * payment) is not counted. Resolves with what ends the count.
 */
export async function admit(core: Core, caller: Caller): Promise<() => void> {
  const accountId = accountOf(caller);
  if (accountId === null) return stayedOut;
  let leave: () => void;
  try {
    leave = accountCounter(core, "account_requests").take(accountId);
  } catch (error) {
    if (error instanceof AppError) await sleep(REFUSAL_DELAY_MS, undefined, { signal: core.stopping }).catch(() => {});
    throw error;
  }
  setScopeAccount(accountId, leave);
  return leave;
}

/** What ends the count of a request that was never counted. */
function stayedOut(): void {}
