import type { Request, Response, Router } from "express";
import type { z } from "zod";
import type { Core } from "../../core/context.js";
import { createHash } from "node:crypto";
import { AppError, type FieldError } from "../../core/errors.js";
import { beginIdempotent, finishIdempotent, releaseIdempotent } from "../../core/idempotency.js";
import { withRequestId } from "../../core/logger.js";
import { parseFields, UNSTORABLE_MESSAGE, unstorableString } from "../../core/schemas/validation.js";
import type { AuthPolicy, Operation } from "../../discovery/operation.js";
import { storeAnswer } from "../../payments/settlements.js";
import type { PaymentEngine } from "../../payments/engine.js";
import { authenticate, type AgentTokenAuth, type PrincipalFor, type UnpaidAuth } from "./authenticate.js";
import { jsonBody } from "./json-body.js";
import { payForRequest } from "./payment-gate.js";
import { Reply } from "./reply.js";
import { replay, storable } from "./stored-answers.js";

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
 * Mounts routes on a router: parse the body (only for routes that take one; others never read
 * it), authenticate, validate every part, call the handler, reply.
 */
export function mountRoutes(router: Router, routes: Route[], core: Core): void {
  const parseBody = jsonBody();
  for (const route of routes) {
    router[route.method](expressPath(route.path), ...(route.body ? parseBody : []), async (req, res, next) => {
      try {
        await withRequestId(String(req.id), () => serve(route, core, req, res));
      } catch (error) {
        next(error);
      }
    });
  }
}

async function serve(route: Route, core: Core, req: Request, res: Response): Promise<void> {
  const auth = await authenticate(core, route.auth, req);
  const errors: FieldError[] = [];
  // No resource has such an id, so a path parameter like that is simply not found.
  if (unstorableString(req.params) !== undefined) throw new AppError("not_found", `No resource at ${req.path}.`);
  for (const [part, schema, value] of [["query", route.query, req.query], ["body", route.body, req.body]] as const) {
    const bad = schema && !(part === "body" && route.protocolBody) ? unstorableString(value) : undefined;
    if (bad !== undefined) errors.push({ field: bad || part, message: UNSTORABLE_MESSAGE });
  }
  if (errors.length > 0) throw new AppError("validation_error", `The request has text that cannot be stored: ${errors.map((e) => e.field).join(", ")}.`, { errors });
  const params = parsePart(route.params, req.params, errors);
  const query = parsePart(route.query, req.query, errors);
  const rawBody = req.body === undefined && route.bodyRequired === false ? {} : req.body;
  const body = parsePart(route.body, rawBody, errors);
  if (errors.length > 0) {
    throw new AppError("validation_error", `The request has ${errors.length} invalid field${errors.length === 1 ? "" : "s"}: ${errors.map((e) => e.field).join(", ")}.`, { errors });
  }
  let principal = auth;
  let receiptHeaders: Record<string, string> = {};
  const paying = (auth as { kind: string }).kind === "unpaid" || (route.price !== undefined && (auth as { kind: string }).kind === "agent_token");
  if (paying) {
    const gate = await payForRequest(core, await paymentEngine(core), req, route, auth as AgentTokenAuth | UnpaidAuth, { params, query, body }, fingerprint(req));
    if ("reply" in gate) return send(route, res, gate.reply);
    ({ principal, receiptHeaders } = gate);
  }
  const settlementId = (principal as { settlementId?: string | null }).settlementId ?? null;
  const run = async () => {
    try {
      const result = await route.handler({ params, query, body, auth: principal, core, req, res } as never);
      const reply = result instanceof Reply ? result : new Reply(route.response.status, result);
      // What a payment bought is remembered, so a retry with the same payment gets it again.
      if (settlementId) await storeAnswer(core, settlementId, reply.status, reply.body);
      return reply;
    } catch (error) {
      if (settlementId && error instanceof AppError && error.status < 500) {
        const { status, body: stored } = storable(error);
        await storeAnswer(core, settlementId, status, stored);
      }
      throw error;
    }
  };
  const key = route.idempotent ? req.get("idempotency-key") : undefined;
  const reply = key === undefined ? await run() : await runIdempotent(core, principal, key, fingerprint(req), run);
  send(route, res, new Reply(reply.status, reply.body, { ...reply.headers, ...receiptHeaders }));
}

function send(route: Route, res: Response, reply: Reply): void {
  if (res.headersSent) return;
  res.set(reply.headers).status(reply.status);
  if (reply.body === undefined) res.end();
  else if (route.response.contentType && route.response.contentType !== "application/json") res.type(route.response.contentType).send(reply.body);
  else res.json(reply.body);
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

/**
 * Runs a request at most once per Idempotency-Key: a retry with the same key and request gets
 * the stored answer (marked Idempotent-Replayed). Final answers are stored, errors included, as
 * Stripe does; a 5xx or 429 is not, so the retry runs again.
 */
async function runIdempotent(core: Core, auth: unknown, key: string, requestHash: string, run: () => Promise<Reply>): Promise<Reply> {
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw new AppError("validation_error", "Idempotency-Key must be 1 to 255 printable characters.", { errors: [{ field: "Idempotency-Key", message: "must be 1 to 255 printable characters" }] });
  }
  const scope = (auth as { accountId?: string }).accountId ?? "anonymous";
  const started = await beginIdempotent(core.db, scope, key, requestHash, core.now());
  if (started.kind === "replay") return replay(started.status, started.body, { "Idempotent-Replayed": "true" });
  try {
    const reply = await run();
    await finishIdempotent(core.db, scope, key, reply.status, reply.body);
    return reply;
  } catch (error) {
    if (error instanceof AppError && error.status < 500 && error.status !== 429) {
      const { status, body } = storable(error);
      await finishIdempotent(core.db, scope, key, status, body);
    } else {
      await releaseIdempotent(core.db, scope, key);
    }
    throw error;
  }
}

function parsePart(schema: z.ZodType | undefined, input: unknown, errors: FieldError[]): unknown {
  return schema ? parseFields(schema, input, errors) : undefined;
}
