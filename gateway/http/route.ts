import type { NextFunction, Request, RequestHandler, Response } from "express";
import { match, type MatchFunction } from "path-to-regexp";
import type { z } from "zod";
import type { Core } from "../../core/context.js";
import { createHash } from "node:crypto";
import { AppError, quoted } from "../../core/errors.js";
import type { AuthPolicy, Operation } from "../../discovery/operation.js";
import { storeAnswer } from "../../payments/settlements.js";
import type { PaymentEngine } from "../../payments/engine.js";
import { authenticate, type AgentTokenAuth, type PrincipalFor, type UnpaidAuth } from "./authenticate.js";
import { servingRequest } from "./deadline.js";
import { jsonBody } from "./json-body.js";
import { idempotencyKeyOf, runIdempotent } from "./idempotency.js";
import { enterAccount } from "./in-flight.js";
import { payForRequest, withPaymentNote, type PaymentMade } from "./payment-gate.js";
import { Reply } from "./reply.js";
import { locateFieldErrors, validateRequest } from "./request-input.js";
import { sealTokens, storable } from "./stored-answers.js";

type Infer<T, Fallback> = T extends z.ZodType ? z.infer<T> : Fallback;

/** What a handler receives: validated input, the authenticated principal, and the core. */
export interface HandlerInput<A extends AuthPolicy, P, Q, B> {
  params: Infer<P, Record<string, never>>;
  query: Infer<Q, Record<string, never>>;
  body: Infer<B, undefined>;
  auth: PrincipalFor<A>;
  core: Core;
  req: Request;
  res: Response;
}

export { Reply } from "./reply.js";

/** An operation plus the function that serves it. */
export interface Route extends Operation {
  handler(input: HandlerInput<AuthPolicy, unknown, unknown, unknown>): Promise<unknown>;
}

/** Declares a route; the handler's input types follow from the schemas and the auth policy. */
export function defineRoute<
  const A extends AuthPolicy,
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(spec: Omit<Operation, "auth" | "params" | "query" | "body"> & {
  auth: A;
  params?: P;
  query?: Q;
  body?: B;
  handler(input: HandlerInput<A, P, Q, B>): Promise<unknown>;
}): Route {
  return spec as unknown as Route;
}

/** `/v1/agents/{agent_id}` → `/v1/agents/:agent_id`. */
export function expressPath(openApiPath: string): string {
  return openApiPath.replace(/\{([^}]+)\}/g, ":$1");
}

/**
 * The group of routes a path belongs to: `/v1/calls/{call_id}` → `/v1/calls`, `/docs/scalar.js`
 * → `/docs`. Lower case, as express matches paths regardless of case.
 */
export function routeGroup(path: string): string {
  const end = path.indexOf("?");
  const [, first = "", second = ""] = (end === -1 ? path : path.slice(0, end)).toLowerCase().split("/", 3);
  return first === "v1" ? `/v1/${second}` : `/${first}`;
}

/** A route ready to serve: its method, its path matcher, and its chain (body parsing, then serving). */
interface MountedRoute {
  route: Route;
  method: string;
  match: MatchFunction<Record<string, string>>;
  chain: RequestHandler[];
}

/**
 * The routes as a request handler that goes straight to the group of the request's path, then to
 * the first route of the group whose method and path match: one express router over some 90
 * routes tried each in turn (and, past 100 layers, deferred to the next event-loop turn), and a
 * router per group still walked layers, processed params and dispatched through each route's own
 * stack, a cost every request paid. Groups never overlap (a route's group is fixed by its literal
 * first segments). Paths match as express's would (path-to-regexp, the matcher express uses: any
 * case, an optional trailing slash, params decoded); HEAD is served by the GET route. A path no
 * route takes falls through to the next handler (a 404 or 405 problem).
 */
export function routeHandler(routes: Route[], core: Core): RequestHandler & { groups: Map<string, MountedRoute[]> } {
  const groups = new Map<string, MountedRoute[]>();
  const parseBody = jsonBody();
  for (const route of routes) {
    const key = routeGroup(route.path);
    if (key.includes("{")) throw new Error(`${route.path}: a route's first segments must be literal`);
    const mounted: MountedRoute = { route, method: route.method.toUpperCase(), match: match<Record<string, string>>(expressPath(route.path), { decode: decodeParam }), chain: [...(route.body ? parseBody : []), routeServer(route, core)] };
    groups.set(key, [...(groups.get(key) ?? []), mounted]);
  }
  const dispatch: RequestHandler = (req, res, next) => {
    const group = groups.get(routeGroup(req.url));
    if (!group) return next();
    const method = req.method === "HEAD" ? "GET" : req.method;
    const path = req.path;
    for (const mounted of group) {
      if (mounted.method !== method) continue;
      let found;
      try {
        found = mounted.match(path);
      } catch (error) {
        return next(error);
      }
      if (!found) continue;
      req.params = found.params;
      return runChain(mounted.chain, req, res, next);
    }
    next();
  };
  // The routes stay in sight of whoever walks the app's routes (the test that /openapi.json describes every mounted one).
  return Object.assign(dispatch, { groups });
}

/** Handlers as one: each in turn, calling next() for the following one; an error, or the end, goes on to the caller's next. */
export function inSequence(chain: RequestHandler[]): RequestHandler {
  return (req, res, next) => runChain(chain, req, res, next);
}

/** Runs handlers in turn, each calling next() for the following one; an error, or the end, goes to done. */
function runChain(chain: RequestHandler[], req: Request, res: Response, done: NextFunction): void {
  let index = 0;
  const next: NextFunction = (error?: unknown) => {
    const handler = chain[index++];
    if (error !== undefined || !handler) return done(error);
    handler(req, res, next);
  };
  next();
}

/** A path param, percent-decoded; a malformed escape is the client's 400. */
function decodeParam(value: string): string {
  if (!value.includes("%")) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    throw new AppError("bad_request", `The path segment '${quoted(value)}' is not valid percent-encoding.`);
  }
}

/** The last handler of a route's chain: authenticate, validate every part, call the handler, reply. */
function routeServer(route: Route, core: Core): RequestHandler {
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

async function serve(route: Route, core: Core, req: Request, res: Response): Promise<void> {
  if (route.consumes && req.method === "HEAD") {
    // express answers HEAD with the GET handler; here that would consume what it never shows.
    throw new AppError("method_not_allowed", `HEAD is not allowed on ${req.path}: reading it consumes events. Use GET, or GET /v1/events/peek to look without consuming.`, { headers: { Allow: "GET" } });
  }
  const auth = await authenticate(core, route.auth, req);
  const leave = await enterAccount(core, auth);
  try {
    await serveAuthenticated(route, core, req, res, auth);
  } finally {
    leave();
  }
}

async function serveAuthenticated(route: Route, core: Core, req: Request, res: Response, auth: unknown): Promise<void> {
  const key = idempotencyKeyOf(route, req.get("idempotency-key"), (auth as { kind: string }).kind);
  const { params, query, body } = validateRequest(route, req);
  let principal = auth;
  let receiptHeaders: Record<string, string> = {};
  let payment: PaymentMade | undefined;
  const paying = (auth as { kind: string }).kind === "unpaid" || (route.price !== undefined && (auth as { kind: string }).kind === "agent_token");
  const engine = paying ? await paymentEngine(core) : undefined;
  if (engine) {
    const gate = await payForRequest(core, engine, req, route, auth as AgentTokenAuth | UnpaidAuth, { params, query, body }, fingerprint(req));
    if ("reply" in gate) return send(route, res, gate.reply);
    ({ principal, receiptHeaders, payment } = gate);
  }
  const settlementId = (principal as { settlementId?: string | null }).settlementId ?? null;
  const run = async () => {
    try {
      const result = await route.handler({ params, query, body, auth: principal, core, req, res } as never);
      const reply = result instanceof Reply ? result : new Reply(route.response.status, result);
      // What a payment bought is remembered, so a retry with the same payment gets it again.
      if (settlementId) await storeAnswer(core, settlementId, reply.status, sealTokens(core, reply.body));
      return reply;
    } catch (thrown) {
      if (!(thrown instanceof AppError)) throw thrown;
      let error = locateFieldErrors(route, thrown);
      if (payment && engine) {
        // Paid with no credential: the payer's own wallet account.
        const walletOwnAccount = (auth as { kind: string }).kind === "unpaid" && !(auth as UnpaidAuth).credential;
        error = await withPaymentNote(core, error, { accountId: (principal as { accountId: string }).accountId, walletOwnAccount }, payment, receiptHeaders, engine.settings.testMoney);
      }
      if (settlementId && error.status < 500) {
        const { status, body: stored } = storable(error);
        await storeAnswer(core, settlementId, status, sealTokens(core, stored));
      }
      throw error;
    }
  };
  const reply = key === undefined ? await run() : await runIdempotent(core, principal, key, fingerprint(req), run);
  send(route, res, payment ? new Reply(reply.status, reply.body, { ...reply.headers, ...receiptHeaders }) : reply);
}

function send(route: Route, res: Response, reply: Reply): void {
  if (res.headersSent) return;
  res.statusCode = reply.status;
  res.set(reply.headers);
  if (route.consumes) {
    // A consuming read must never be replayed by a cache (the events it took would be lost).
    res.setHeader("Cache-Control", "no-store");
    writeJson(res, reply.body);
    return;
  }
  if (reply.body === undefined) res.end();
  else if (route.response.contentType && route.response.contentType !== "application/json") res.type(route.response.contentType).send(reply.body);
  else writeJson(res, reply.body);
}

/**
 * JSON as express's res.json writes it, the same bytes and headers, without the work res.send
 * does for every body (charset parsing, ETag and freshness checks) that an API answer never
 * needs here: a tenth of a simple GET's CPU went to express's response helpers.
 */
function writeJson(res: Response, body: unknown): void {
  const text = JSON.stringify(body);
  if (!res.hasHeader("Content-Type")) res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(text));
  res.end(res.req.method === "HEAD" ? undefined : text);
}

const engines = new WeakMap<Core, Promise<PaymentEngine>>();

/**
 * The payment engine, made on first use: it needs the public URL (known once the server
 * listens), and the payment libraries take a second to load, which only paid requests need.
 */
function paymentEngine(core: Core): Promise<PaymentEngine> {
  let engine = engines.get(core);
  if (!engine) engines.set(core, (engine = import("../../payments/engine.js").then(({ PaymentEngine }) => new PaymentEngine(core))));
  return engine;
}

/** A request's fingerprint: method, URL (with its query) and the exact body bytes. */
function fingerprint(req: Request): string {
  const raw = (req as { rawBody?: Buffer }).rawBody ?? Buffer.alloc(0);
  return createHash("sha256").update(`${req.method} ${req.originalUrl}\n`).update(raw).digest("hex");
}
