import type { Request, RequestHandler, Response } from "express";
import type { Core } from "../../core/context.js";
import { AppError } from "../../core/errors.js";
import { authenticate } from "./authenticate.js";
import { servingRequest } from "./deadline.js";
import { type IdempotencyKey, idempotencyKeyOf, runIdempotent } from "./idempotency.js";
import { admit } from "./in-flight.js";
import { keepPaidAnswer, refusedAfterPayment } from "./paid-answers.js";
import { free, type Proceed, pay } from "./payment-gate.js";
import type { Caller } from "./principal.js";
import { Reply } from "./reply.js";
import { fingerprint, locateFieldErrors, type RequestInput, validateRequest } from "./request-input.js";
import type { Route } from "./route.js";

/**
 * The last handler of a route's chain: the request served through its steps, with its id and
 * deadline current; a refusal goes on to the error handler, its fields located.
 */
export function serveRoute(route: Route, core: Core): RequestHandler {
  return async (req, res, next) => {
    // Named for the request's duration metric, observed when the answer is sent (request-context.ts).
    res.locals.route = route.path;
    try {
      await servingRequest(req, res, () => serve(route, core, req, res));
    } catch (error) {
      next(error instanceof AppError ? locateFieldErrors(route, error) : error);
    }
  };
}

/** The steps, in order: authenticate → admit → validate → pay → idempotent → handle → reply. */
async function serve(route: Route, core: Core, req: Request, res: Response): Promise<void> {
  refuseHeadOfConsumingRead(route, req);
  const caller = await authenticate(core, route.auth, req);
  const leave = await admit(core, caller);
  try {
    const input = validate(route, req, caller);
    // Who pays: an unpaid request, and an agent token on a priced route. The rest, most requests,
    // are free, and wait on nothing here.
    const payment = caller.kind === "unpaid" || (caller.kind === "agent_token" && route.price) ? await pay(core, route, req, caller, input) : free(caller);
    if (payment.kind === "payment-required") throw payment.problem;
    if (payment.kind === "replay") {
      if (payment.answer instanceof AppError) throw payment.answer;
      return reply(route, res, payment.answer);
    }
    const answer =
      input.idempotencyKey === undefined
        ? await handle(route, core, req, res, input, payment)
        : await runIdempotent(core, input.idempotencyKey, fingerprint(req), () => handle(route, core, req, res, input, payment));
    reply(route, res, payment.kind === "paid" ? withReceipt(answer, payment.receiptHeaders) : answer);
  } finally {
    leave();
  }
}

/** express answers HEAD with the GET handler; on a consuming read that would consume what it never shows. */
function refuseHeadOfConsumingRead(route: Route, req: Request): void {
  if (route.consumes && req.method === "HEAD") {
    throw new AppError(
      "method_not_allowed",
      `HEAD is not allowed on ${req.path}: reading it consumes events. Use GET, or GET /v1/events/peek to look without consuming.`,
      { headers: { Allow: "GET" } },
    );
  }
}

/** A request's validated parts, and its Idempotency-Key. */
interface ValidRequest extends RequestInput {
  idempotencyKey: IdempotencyKey | undefined;
}

/** The validate step: the Idempotency-Key header first, then every part against the route's schemas. */
function validate(route: Route, req: Request, caller: Caller): ValidRequest {
  const idempotencyKey = idempotencyKeyOf(route, req.get("idempotency-key"), caller);
  const { params, query, body } = validateRequest(route, req);
  return { params, query, body, idempotencyKey };
}

/**
 * The handle step: the route's handler, for the principal the payment step settled on, its
 * result as a Reply. What a payment bought is kept, so a retry with the same payment gets it
 * again; a refusal after a payment says where the money went.
 */
async function handle(route: Route, core: Core, req: Request, res: Response, input: RequestInput, payment: Proceed): Promise<Reply> {
  try {
    const result = await route.handler({ params: input.params, query: input.query, body: input.body, auth: payment.principal, core, req, res });
    const answer = result instanceof Reply ? result : new Reply(route.response.status, result);
    if (payment.kind === "paid") await keepPaidAnswer(core, payment, answer);
    return answer;
  } catch (thrown) {
    if (!(thrown instanceof AppError)) throw thrown;
    const error = locateFieldErrors(route, thrown);
    throw payment.kind === "paid" ? await refusedAfterPayment(core, payment, error) : error;
  }
}

/** A paid answer, with the payment's receipt. */
function withReceipt(answer: Reply, receiptHeaders: Record<string, string>): Reply {
  return new Reply(answer.status, answer.body, { ...answer.headers, ...receiptHeaders });
}

/** The reply step: the answer written, unless something (a deadline's 503, a stream) answered already. */
function reply(route: Route, res: Response, answer: Reply): void {
  if (res.headersSent) return;
  res.statusCode = answer.status;
  res.set(answer.headers);
  if (route.consumes) {
    // A consuming read must never be replayed by a cache (the events it took would be lost).
    res.setHeader("Cache-Control", "no-store");
    writeJson(res, answer.body);
    return;
  }
  if (answer.body === undefined) res.end();
  else if (route.response.contentType && route.response.contentType !== "application/json") res.type(route.response.contentType).send(answer.body);
  else writeJson(res, answer.body);
}

/**
 * JSON as express's res.json writes it, the same bytes and headers, without the work res.send
 * does for every body (charset parsing, ETag and freshness checks) that an API answer never
 * needs here (docs/decisions/0063-http-fast-path.md).
 */
function writeJson(res: Response, body: unknown): void {
  const text = JSON.stringify(body);
  if (!res.hasHeader("Content-Type")) res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(text));
  res.end(res.req.method === "HEAD" ? undefined : text);
}
