import type { Request, RequestHandler, Response } from "express";
import { deadlineExceeded, RequestDeadline } from "../../core/db/deadline.js";
import type { Logger } from "../../core/logger.js";
import { inRequestScope } from "../../core/request-scope.js";
import { sendProblem } from "./problem.js";

/**
 * Gives every request a deadline (REQUEST_DEADLINE_MS). When it passes before the
 * answer, the request is answered 503 service_unavailable with Retry-After and its database work
 * is called off (core/db/guard.ts), so nothing commits after the answer. A COMMIT already on its
 * way is let finish, and the request is answered with its outcome. A response already streaming
 * (an MCP event stream) is left alone.
 */
export function requestDeadline(deadlineMs: number, logger: Logger): RequestHandler {
  return (req, res, next) => {
    const deadline = new RequestDeadline(Date.now() + deadlineMs);
    res.locals.deadline = deadline;
    let timer: NodeJS.Timeout;
    const check = () => {
      if (res.headersSent) return;
      const left = deadline.remainingMs();
      // A long poll moved the deadline out.
      if (left > 0) return void (timer = setTimeout(check, left));
      if (deadline.isCommitting) return;
      deadline.expire();
      logger.warn({ request_id: req.id, method: req.method, path: req.path }, "request deadline passed; answered 503");
      sendProblem(req, res, deadlineExceeded());
    };
    timer = setTimeout(check, deadlineMs);
    res.on("close", () => clearTimeout(timer));
    next();
  };
}

/**
 * Runs a request's handler with its id and deadline current: its log lines carry the id, its
 * database work is bound by the deadline, and takes its client address's turn on the embedded
 * database until it is authenticated (then its account's: gateway/http/in-flight.ts).
 */
export function servingRequest<T>(req: Request, res: Response, fn: () => T): T {
  return inRequestScope({ requestId: String(req.id), deadline: res.locals.deadline as RequestDeadline | undefined, tenant: `address:${req.ip ?? ""}` }, fn);
}
