import type { IncomingMessage } from "node:http";
import type { RequestHandler } from "express";
import { pinoHttp } from "pino-http";
import { newId } from "../../core/ids.js";
import type { Logger } from "../../core/logger.js";

// An incoming X-Request-Id is kept when it is short and plain, so callers can trace their own ids.
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Gives every request an id (echoed as X-Request-Id) and logs each request with it. */
export function requestContext(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    genReqId(req: IncomingMessage, res) {
      const incoming = req.headers["x-request-id"];
      const id = typeof incoming === "string" && ACCEPTABLE_REQUEST_ID.test(incoming) ? incoming : newId("req");
      res.setHeader("X-Request-Id", id);
      return id;
    },
    customProps: (req) => ({ request_id: req.id }),
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? "error" : res.statusCode >= 400 ? "info" : "debug"),
    serializers: {
      req: (req: { method: string; url: string }) => ({ method: req.method, url: req.url }),
      res: (res: { statusCode: number }) => ({ status: res.statusCode }),
    },
    quietReqLogger: true,
  });
}
