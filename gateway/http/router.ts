import type { NextFunction, Request, RequestHandler, Response } from "express";
import { type MatchFunction, match } from "path-to-regexp";
import type { Core } from "../../core/context.js";
import { AppError, quoted } from "../../core/errors.js";
import { jsonBody } from "./json-body.js";
import { serveRoute } from "./pipeline.js";
import type { Route } from "./route.js";

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
    const mounted: MountedRoute = {
      route,
      method: route.method.toUpperCase(),
      match: match<Record<string, string>>(expressPath(route.path), { decode: decodeParam }),
      chain: [...(route.body ? parseBody : []), serveRoute(route, core)],
    };
    groups.set(key, [...(groups.get(key) ?? []), mounted]);
  }
  const dispatch: RequestHandler = (req, res, next) => {
    const group = groups.get(routeGroup(req.url));
    if (!group) return next();
    const method = req.method === "HEAD" ? "GET" : req.method;
    const path = req.path;
    for (const mounted of group) {
      if (mounted.method !== method) continue;
      let found: ReturnType<MountedRoute["match"]>;
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
