import { isIP } from "node:net";
import type { RequestHandler } from "express";
import { safeEqual } from "../../core/auth/tokens.js";
import type { Core } from "../../core/context.js";
import { AppError } from "../../core/errors.js";
import { bearerToken } from "./authenticate.js";

function isLoopback(address: string | undefined): boolean {
  if (!address || isIP(address) === 0) return false;
  return address === "::1" || address.startsWith("127.") || address.startsWith("::ffff:127.");
}

/**
 * GET /metrics, Prometheus text format. It shows operational figures (no tenant's data), but
 * they are not for the public: with METRICS_TOKEN set, a scraper presents it as a Bearer token;
 * unset, only loopback clients (a scraper or sidecar on the same host) are answered. The
 * connection's own address decides, never X-Forwarded-For, so a proxy in front does not open it.
 */
export function metricsEndpoint(core: Core): RequestHandler {
  return (req, res, next) => {
    const token = core.config.metricsToken;
    if (token ? !safeEqual(bearerToken(req.get("authorization")) ?? "", token) : !isLoopback(req.socket.remoteAddress)) {
      const detail = token ? "Send METRICS_TOKEN as 'Authorization: Bearer <token>'." : "/metrics answers loopback clients only; set METRICS_TOKEN to scrape from elsewhere.";
      return next(token ? new AppError("unauthorized", detail, { headers: { "WWW-Authenticate": 'Bearer realm="agentline-metrics"' } }) : new AppError("forbidden", detail));
    }
    const { registry } = core.metrics;
    registry.metrics().then(
      (text) => res.type(registry.contentType).send(text),
      (error: unknown) => next(error),
    );
  };
}
