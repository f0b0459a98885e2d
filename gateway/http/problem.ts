import type { ErrorRequestHandler, Request, RequestHandler, Response } from "express";
import { AppError, ERROR_CODES, type ErrorCode, quoted, unavailableDependency } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { Operation } from "../../discovery/operation.js";

/** The URI naming a problem type; the service serves a description of it there. */
export function problemTypeUri(req: Request, code: ErrorCode): string {
  return `${publicBaseUrl(req)}/problems/${code}`;
}

/** The public base URL: BASE_URL when configured, else what the request was addressed to. */
export function publicBaseUrl(req: Request): string {
  const configured = req.app.locals.baseUrl as string | undefined;
  return configured ?? `${req.protocol}://${req.get("host") ?? "localhost"}`;
}

export function sendProblem(req: Request, res: Response, error: AppError): void {
  const { title } = ERROR_CODES[error.code];
  res
    .status(error.status)
    .set(error.headers)
    .type("application/problem+json")
    .send(
      JSON.stringify({
        type: problemTypeUri(req, error.code),
        title,
        status: error.status,
        detail: error.detail,
        code: error.code,
        ...(error.errors ? { errors: error.errors } : {}),
        ...error.extra,
        request_id: String(req.id),
      }),
    );
}

// body-parser reports its failures as errors with a `type`; each becomes a clear 4xx.
function fromBodyParser(error: { type?: string; status?: number; message?: string }): AppError | undefined {
  switch (error.type) {
    case "entity.parse.failed":
      return new AppError("malformed_json", "The request body is not valid JSON.");
    case "entity.too.large":
      return new AppError("payload_too_large", "The request body is larger than 1 MiB.");
    case "encoding.unsupported":
    case "charset.unsupported":
      return new AppError("unsupported_media_type", "The request body must be UTF-8 JSON.");
    default:
      if (typeof error.status === "number" && error.status >= 400 && error.status < 500) {
        return new AppError("bad_request", "The request body could not be read.");
      }
      return undefined;
  }
}

/**
 * The one error handler: AppErrors and parser failures become problems; a database that is
 * unreachable, restarting or timing out a statement becomes 503 service_unavailable with
 * Retry-After; anything else a bare 500.
 */
export function problemHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    if (res.writableEnded) {
      // Already answered (its deadline passed): what the handler met afterwards is only logged.
      logger.debug({ err: error, request_id: req.id }, "error after the request was answered");
      return;
    }
    const known = error instanceof AppError ? error : (fromBodyParser(error) ?? unavailableDependency(error));
    if (known) {
      if (known.status >= 500) logger.error({ err: known.cause ?? known, request_id: req.id }, known.detail);
      sendProblem(req, res, known);
      return;
    }
    logger.error({ err: error, request_id: req.id }, "unexpected error");
    if (res.headersSent) {
      res.destroy();
      return;
    }
    // Only the request id: the cause is in the log, never in the response.
    res
      .status(500)
      .type("application/problem+json")
      .send(
        JSON.stringify({
          type: problemTypeUri(req, "internal_error"),
          title: ERROR_CODES.internal_error.title,
          status: 500,
          detail: `An unexpected error occurred. Quote request id ${String(req.id)} when reporting it.`,
          code: "internal_error",
          request_id: String(req.id),
        }),
      );
  };
}

/**
 * The last handler: no route matched. A path that exists with other methods is a 405 naming
 * them in `Allow` (MCP clients, for one, read a 405 on GET /mcp as "no standalone stream").
 */
export function routeNotFound(routes: Operation[]): RequestHandler {
  const patterns = routes.map((route) => ({ method: route.method.toUpperCase(), pattern: pathPattern(route.path) }));
  return (req, res, next) => {
    const allowed = [...new Set(patterns.filter((p) => p.pattern.test(req.path)).map((p) => p.method))];
    if (allowed.length > 0) {
      if (allowed.includes("GET")) allowed.push("HEAD");
      // OPTIONS names what the path takes, as express's routers answered it.
      if (req.method === "OPTIONS") return void res.set("Allow", allowed.join(", ")).type("text/plain").send(allowed.join(", "));
      next(
        new AppError("method_not_allowed", `${req.method} is not allowed on ${quoted(req.path)}; it takes ${allowed.join(", ")}.`, {
          headers: { Allow: allowed.join(", ") },
        }),
      );
      return;
    }
    next(new AppError("not_found", `No route for ${req.method} ${quoted(req.path)}. See /openapi.json for every route.`));
  };
}

/** `/v1/calls/{call_id}` → a regular expression matching its concrete paths. */
function pathPattern(path: string): RegExp {
  const escaped = path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+");
  return new RegExp(`^${escaped}/?$`);
}
