import { z } from "zod";

/** The per-account and per-address limits, each with its documentation (docs/configuration.md is generated from them). */
export const limitSettings = z
  .object({
    ACCOUNT_MAX_SOCKETS: z.coerce.number().int().min(1).max(100_000).default(500).meta({
      description:
        "WebSockets (relay and softphone) one account may have open on each process; beyond, the upgrade is a 429 naming the limit. A relay reconnect for the same agent takes over its old socket's place.",
    }),
    ACCOUNT_MAX_WAITS: z.coerce.number().int().min(1).max(10_000).default(20).meta({
      description: "Long polls one account may have waiting on each process (MCP `wait_for_event`); beyond, an `isError` result naming the limit.",
    }),
    ACCOUNT_MAX_AGENTS: z.coerce.number().int().min(1).max(1_000_000).default(1_000).meta({ description: "Agents one account may have; beyond, 429." }),
    ACCOUNT_MAX_REQUESTS: z.coerce.number().int().min(1).max(100_000).default(200).meta({
      description: "Requests one account may have in flight on each process (a long poll counts as a wait instead); beyond, 429.",
    }),
    IP_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(1_000_000).default(2_000).meta({
      description:
        "Connections one client address may hold open on each process (idle keep-alives and WebSockets included); beyond, a new one is answered 429 and closed. Counted by TCP peer: behind a proxy, cap clients at the proxy ([operating.md](operating.md)).",
    }),
  })
  .meta({
    title: "Limits",
    description:
      "What one account, or one client address, may hold open or in flight at once, so that it never stalls another. Each refusal (a 429 or a WebSocket close) names the limit it hit.",
  });

export type LimitSettings = z.output<typeof limitSettings>;

/** The limits' part of Config. */
export function limitsConfig(e: LimitSettings) {
  return {
    /** What one account, or one client address, may hold open or in flight at once. */
    limits: {
      accountSockets: e.ACCOUNT_MAX_SOCKETS,
      accountWaits: e.ACCOUNT_MAX_WAITS,
      accountAgents: e.ACCOUNT_MAX_AGENTS,
      accountRequests: e.ACCOUNT_MAX_REQUESTS,
      ipConnections: e.IP_MAX_CONNECTIONS,
    },
  };
}

/** Per-account and per-address ceilings; each refusal (a 429 or a WebSocket close) names the one it hit. */
export type Limits = ReturnType<typeof limitsConfig>["limits"];
