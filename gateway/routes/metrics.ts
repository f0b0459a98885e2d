import { isIP } from "node:net";
import type { Request } from "express";
import { z } from "zod";
import { safeEqual } from "../../core/auth/tokens.js";
import type { Core } from "../../core/context.js";
import { AppError } from "../../core/errors.js";
import { bearerToken } from "../http/authenticate.js";
import { defineRoute, Reply } from "../http/route.js";

function isLoopback(address: string | undefined): boolean {
  if (!address || isIP(address) === 0) return false;
  return address === "::1" || address.startsWith("127.") || address.startsWith("::ffff:127.");
}

/**
 * Operational figures are not for the public: with METRICS_TOKEN set a scraper presents it as a
 * Bearer token; unset, only loopback clients (a scraper or sidecar on the same host) are
 * answered. The connection's own address decides, never X-Forwarded-For, so a proxy in front
 * does not open it.
 */
function requireScraper(core: Core, req: Request): void {
  const token = core.config.metricsToken;
  if (!token) {
    if (!isLoopback(req.socket.remoteAddress))
      throw new AppError("forbidden", "/metrics answers loopback clients only; set METRICS_TOKEN to scrape from elsewhere.");
    return;
  }
  if (!safeEqual(bearerToken(req.get("authorization")) ?? "", token)) {
    throw new AppError("unauthorized", "Send METRICS_TOKEN as 'Authorization: Bearer <token>'.", {
      headers: { "WWW-Authenticate": 'Bearer realm="agentline-metrics"' },
    });
  }
}

export const metricsRoutes = [
  defineRoute({
    operationId: "getMetrics",
    method: "get",
    path: "/metrics",
    summary: "Operational metrics (Prometheus text format)",
    description:
      "The service's share of each live-turn leg, request durations by route, relay sockets open, events pending by route and webhook deliveries by outcome, for this process. For operators: with METRICS_TOKEN set, send it as a Bearer token; unset, only loopback clients are answered (403).",
    tags: ["Discovery"],
    auth: "none",
    response: { status: 200, description: "The metrics", schema: z.string(), contentType: "text/plain" },
    handler: async ({ core, req }) => {
      requireScraper(core, req);
      return new Reply(200, await core.metrics.registry.metrics());
    },
  }),
];
