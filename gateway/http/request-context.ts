import type { RequestHandler } from "express";
import { newId } from "../../core/ids.js";
import type { Logger } from "../../core/logger.js";
import type { Metrics } from "../../core/metrics.js";

declare module "node:http" {
  interface IncomingMessage {
    /** The request's id (X-Request-Id), set by requestContext before anything else runs. */
    id: string;
  }
}

// Query parameters whose values are never written to a log, by name or by what the value looks like.
const SECRET_PARAMETER = /^(api[_-]?key|key|token|access[_-]?token|agent[_-]?token|push[_-]?token|ticket|secret|password|auth|authorization)$/i;
const CREDENTIAL_VALUE = /(^|[^0-9A-Za-z_])(sk|at|pt|rt|whsec)_[0-9A-Za-z]{6,}/;

function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, " "));
  } catch {
    return text;
  }
}

/**
 * A URL as it may be logged: the value of any query parameter that names a credential (api_key,
 * token, ...) or holds one (sk_, at_, pt_, rt_) is replaced by `[redacted]`. A client that sends
 * its key in the query is refused, and its key must not then sit in the access log.
 */
export function redactUrl(url: string): string {
  const start = url.indexOf("?");
  if (start < 0) return url;
  const query = url
    .slice(start + 1)
    .split("&")
    .map((pair) => {
      const equals = pair.indexOf("=");
      // A bare `?sk_...` is a credential with no name.
      if (equals < 0) return CREDENTIAL_VALUE.test(decoded(pair)) ? "[redacted]" : pair;
      const name = pair.slice(0, equals);
      if (CREDENTIAL_VALUE.test(decoded(name))) return "[redacted]=[redacted]";
      return SECRET_PARAMETER.test(decoded(name)) || CREDENTIAL_VALUE.test(decoded(pair.slice(equals + 1))) ? `${name}=[redacted]` : pair;
    });
  return `${url.slice(0, start)}?${query.join("&")}`;
}

// An incoming X-Request-Id is kept when it is short and plain, so callers can trace their own ids.
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id (echoed as X-Request-Id) and logs each answered request with it:
 * 5xx as errors, 4xx at info, the rest at debug. Written here rather than with pino-http, which
 * made a child logger for every request whether or not anything was logged (0.2 ms of each
 * live turn's push at LOG_LEVEL=warn). A request a route served (`res.locals.route`) is also
 * timed in the request-duration metric, from the same one listener.
 */
export function requestContext(logger: Logger, metrics: Pick<Metrics, "httpRequest">): RequestHandler {
  return (req, res, next) => {
    const incoming = req.headers["x-request-id"];
    const id = typeof incoming === "string" && ACCEPTABLE_REQUEST_ID.test(incoming) ? incoming : newId("req");
    req.id = id;
    res.setHeader("X-Request-Id", id);
    const started = performance.now();
    res.once("finish", () => {
      const elapsedMs = performance.now() - started;
      const route = res.locals.route as string | undefined;
      if (route) metrics.httpRequest.observe({ method: req.method, route, status: res.statusCode }, elapsedMs / 1000);
      const level = res.statusCode >= 500 ? "error" : res.statusCode >= 400 ? "info" : "debug";
      if (!logger.isLevelEnabled(level)) return;
      const responseTime = Math.round(elapsedMs);
      logger[level](
        { request_id: id, req: { method: req.method, url: redactUrl(req.originalUrl) }, res: { status: res.statusCode }, responseTime },
        "request completed",
      );
    });
    next();
  };
}
