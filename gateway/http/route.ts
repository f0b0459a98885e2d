import type { Request, Response } from "express";
import type { z } from "zod";
import type { Core } from "../../core/context.js";
import type { AuthPolicy, Operation } from "../../discovery/operation.js";
import type { PrincipalFor } from "./principal.js";

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

/**
 * An operation plus the function that serves it (gateway/http/router.ts finds it for a request,
 * gateway/http/pipeline.ts serves it). Its handler takes the input of any route: a route's own
 * narrower types are defineRoute's.
 */
export interface Route extends Operation {
  handler(input: HandlerInput<AuthPolicy, z.ZodType, z.ZodType, z.ZodType>): Promise<unknown>;
}

/** Declares a route; the handler's input types follow from the schemas and the auth policy. */
export function defineRoute<
  const A extends AuthPolicy,
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(
  spec: Omit<Operation, "auth" | "params" | "query" | "body"> & {
    auth: A;
    params?: P;
    query?: Q;
    body?: B;
    handler(input: HandlerInput<A, P, Q, B>): Promise<unknown>;
  },
): Route {
  // The route's own input types give way to any route's: the pipeline hands each handler what its
  // schemas parsed and the principal its policy admits.
  return spec as unknown as Route;
}
