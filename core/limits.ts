import type { Limits } from "./config.js";
import type { Core } from "./context.js";
import { type LimitName, limitReached } from "./errors.js";

/** One ceiling: its setting, what it counts, and what a client meets beyond it (for /.well-known/service.json). */
export interface LimitDescription {
  setting: keyof Limits;
  /** The environment variable that sets it. */
  env: string;
  counts: string;
  beyond: string;
}

/** Every per-account and per-address ceiling, by the name refusals and the service document give it. */
export const LIMITS: Record<LimitName, LimitDescription> = {
  account_sockets: {
    setting: "accountSockets",
    env: "ACCOUNT_MAX_SOCKETS",
    counts: "WebSockets (relay and softphone) one account has open at once",
    beyond: "the upgrade is refused: 429 limit_reached",
  },
  account_waits: {
    setting: "accountWaits",
    env: "ACCOUNT_MAX_WAITS",
    counts: "long polls (MCP wait_for_event) one account has waiting at once, in one process",
    beyond: "the wait_for_event call answers isError with limit_reached; let a wait finish first",
  },
  account_agents: {
    setting: "accountAgents",
    env: "ACCOUNT_MAX_AGENTS",
    counts: "agents one account has",
    beyond: "creating another is refused: 429 limit_reached; delete one first",
  },
  account_requests: {
    setting: "accountRequests",
    env: "ACCOUNT_MAX_REQUESTS",
    counts: "requests one account has in flight at once, in one process (a long poll counts as a wait instead)",
    beyond: "429 limit_reached with Retry-After",
  },
  ip_connections: {
    setting: "ipConnections",
    env: "IP_MAX_CONNECTIONS",
    counts: "TCP connections one client address holds open (idle keep-alives and WebSockets included)",
    beyond: "new connections are closed",
  },
};

/**
 * How many of something each account holds at once in this process, refusing one beyond the
 * ceiling. Counted in memory, per process: what it protects (this process's event loop and its
 * database connection) is per process too, and a count in the database would cost a statement
 * on every request it guards.
 */
export class AccountCounter {
  private readonly held = new Map<string, number>();

  constructor(
    private readonly limit: LimitName,
    readonly max: number,
    private readonly refusal: (max: number) => string,
  ) {}

  /** Takes one for the account, or throws limit_reached. The returned function gives it back; calling it again does nothing. */
  take(accountId: string): () => void {
    const count = this.held.get(accountId) ?? 0;
    if (count >= this.max) throw limitReached(this.limit, this.max, this.refusal(this.max));
    this.held.set(accountId, count + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = (this.held.get(accountId) ?? 1) - 1;
      if (left > 0) this.held.set(accountId, left);
      else this.held.delete(accountId);
    };
  }

  /** How many the account holds now. */
  count(accountId: string): number {
    return this.held.get(accountId) ?? 0;
  }
}

const counters = new WeakMap<Core, Map<LimitName, AccountCounter>>();

/** The process's counter for a limit (one per core), sized from config.limits. */
export function accountCounter(core: Core, limit: "account_waits" | "account_requests"): AccountCounter {
  let byName = counters.get(core);
  if (!byName) counters.set(core, (byName = new Map()));
  let counter = byName.get(limit);
  if (!counter) byName.set(limit, (counter = new AccountCounter(limit, core.config.limits[LIMITS[limit].setting], REFUSALS[limit])));
  return counter;
}

const REFUSALS: Record<"account_waits" | "account_requests", (max: number) => string> = {
  account_waits: (max) =>
    `This account already has ${max} waits (wait_for_event) open at once, its limit (account_waits). Let one finish, or wait on fewer at a time.`,
  account_requests: (max) => `This account already has ${max} requests in flight, its limit (account_requests). Wait for some to finish, then retry.`,
};
