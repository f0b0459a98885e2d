import { sql } from "drizzle-orm";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Database } from "./db/database.js";
import { executeRows } from "./db/database.js";

/**
 * What an operator scrapes at /metrics (Prometheus text format): the service's share of each
 * live-turn leg as this process sees it, request durations by route, open relay sockets, pending
 * events by route and webhook deliveries by outcome. One registry per core, so several cores in
 * one process (tests) never mix their figures.
 */
export interface Metrics {
  registry: Registry;
  /** Seconds from a leg's arrival (the utterance, the push) to its hand-off (event sent or announced, speech sent). */
  turnLeg: Histogram<"leg">;
  httpRequest: Histogram<"method" | "route" | "status">;
  relaySockets: Gauge;
  webhookDeliveries: Counter<"outcome">;
}

// From a fraction of a millisecond (the live-turn legs) to seconds (a slow request).
const BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export function createMetrics(db: Database): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "agentline_" });
  new Gauge({
    name: "agentline_events_pending",
    help: "Events not yet delivered, by where they are headed (relay, webhook, mailbox).",
    labelNames: ["route"],
    registers: [registry],
    async collect() {
      // Raw SQL: a grouped count, read at scrape time only.
      const rows = await executeRows<{ route: string; pending: number | string }>(
        db,
        sql`select route, count(*) as pending from events where status = 'pending' group by route`,
      );
      this.reset();
      for (const route of ["relay", "webhook", "mailbox"]) this.set({ route }, 0);
      for (const row of rows) this.set({ route: row.route }, Number(row.pending));
    },
  });
  return {
    registry,
    turnLeg: new Histogram({
      name: "agentline_turn_leg_seconds",
      help: "The service's own share of a live-turn leg: utterance (to the call.utterance hand-off) or push (to the speech hand-off).",
      labelNames: ["leg"],
      buckets: BUCKETS,
      registers: [registry],
    }),
    httpRequest: new Histogram({
      name: "agentline_http_request_duration_seconds",
      help: "API request durations by route.",
      labelNames: ["method", "route", "status"],
      buckets: BUCKETS,
      registers: [registry],
    }),
    relaySockets: new Gauge({ name: "agentline_relay_sockets_open", help: "Relay sockets open in this process.", registers: [registry] }),
    webhookDeliveries: new Counter({
      name: "agentline_webhook_deliveries_total",
      help: "Webhook delivery attempts, by outcome (succeeded, failed).",
      labelNames: ["outcome"],
      registers: [registry],
    }),
  };
}

/** Seconds since `started` (a performance.now() reading). */
export function secondsSince(started: number): number {
  return (performance.now() - started) / 1000;
}
