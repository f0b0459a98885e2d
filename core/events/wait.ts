import { loadAgent } from "../agents/agents.js";
import { loadCall } from "../calls/call-records.js";
import type { Core } from "../context.js";
import { accountCounter } from "../limits.js";
import { extendCurrentDeadline, leaveRequestCount } from "../request-scope.js";
import { EVENTS_CREATED_CHANNEL } from "./channels.js";
import { claimEvents, type EventFilter } from "./events.js";

/**
 * How often a wait looks again with no announcement. Announcements wake it at once, and so does
 * the bus coming back after a lost connection (the one way an announcement is missed); this is
 * only a safety net. Every look is a transaction: at one a second, 500 waits were 500 on the
 * embedded database's one connection every second, beside every other tenant's work.
 */
const RECHECK_MS = 10_000;

export interface WaitOptions {
  limit: number;
  timeoutMs: number;
  /** Ends the wait early (the client went away, its credential was revoked); nothing is taken after. The process stopping ends it too. */
  signal?: AbortSignal | undefined;
}

/**
 * A long-poll of the mailbox: takes the pending events matching filter, oldest first, as soon as
 * there are any, or returns none when timeoutMs passes. Events it returns are consumed, exactly as
 * by a poll. An agent or call that is not the account's is a 404 before any waiting. An account
 * waits on at most config.limits.accountWaits at once (limit_reached beyond); a wait of 0 ms
 * only looks, and is not counted.
 */
export async function waitForEvents(core: Core, accountId: string, filter: EventFilter, options: WaitOptions) {
  // The client going away ends the wait, and so does this process beginning to stop.
  const signal = options.signal ? AbortSignal.any([options.signal, core.stopping]) : core.stopping;
  if (filter.agentId) await loadAgent(core.db, accountId, filter.agentId);
  const call = filter.callId ? await loadCall(core.db, accountId, filter.callId) : undefined;
  if (options.timeoutMs <= 0) {
    const batch = await claimEvents(core, accountId, filter, options.limit);
    return { ...batch, timed_out: batch.data.length === 0 };
  }
  const release = accountCounter(core, "account_waits").take(accountId);
  // Counted as a wait, the request holding it stops counting among the account's requests in flight.
  leaveRequestCount();
  // The request's deadline bounds its database work, not the wait it asked for.
  extendCurrentDeadline(options.timeoutMs);
  // A call's events are its agent's: waiting on a call wakes only for that agent's events.
  const agentId = filter.agentId ?? call?.agentId;
  const deadline = Date.now() + options.timeoutMs;
  let announced = false;
  let wake: (() => void) | undefined;
  const unsubscribe = [
    core.bus.subscribe(EVENTS_CREATED_CHANNEL, (message) => {
      if (message.account_id !== accountId || (agentId && message.agent_id !== agentId)) return;
      announced = true;
      wake?.();
    }),
    // Announcements sent while the bus was reconnecting were missed: look now.
    core.bus.onReconnect(() => {
      announced = true;
      wake?.();
    }),
  ];
  try {
    for (;;) {
      announced = false;
      const batch = await claimEvents(core, accountId, filter, options.limit);
      const left = deadline - Date.now();
      if (batch.data.length > 0 || left <= 0 || signal.aborted) return { ...batch, timed_out: batch.data.length === 0 };
      // An announcement that came while the claim ran is not lost: look again at once.
      if (announced) continue;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", done);
          wake = undefined;
          resolve();
        };
        const timer = setTimeout(done, Math.min(left, RECHECK_MS));
        signal.addEventListener("abort", done, { once: true });
        wake = done;
      });
      // Ended while it slept (the client left, the credential was revoked, the process stops): take nothing more.
      if (signal.aborted) return { data: [], limit: options.limit, has_more: false, timed_out: true };
    }
  } finally {
    unsubscribe.forEach((off) => off());
    release();
  }
}
