import { createHash } from "node:crypto";
import type { Request } from "express";
import type { z } from "zod";
import { AppError, type FieldError, type FieldLocation, quoted } from "../../core/errors.js";
import { parseFields, UNSTORABLE_MESSAGE, unstorableString, validationFailed } from "../../core/schemas/validation.js";
import type { Operation } from "../../discovery/operation.js";

/** A request's validated parts. */
export interface RequestInput {
  params: unknown;
  query: unknown;
  body: unknown;
}

/** True when the request carried body bytes (an empty body with a JSON content type counts as none). */
function bodySent(req: Request): boolean {
  const raw = (req as { rawBody?: Buffer }).rawBody;
  return raw !== undefined && raw.length > 0;
}

function tag(errors: FieldError[], from: number, where: FieldLocation): void {
  for (const error of errors.slice(from)) {
    error.in ??= where;
    if (where === "query" && error.message === "is not a recognised field") error.message = "is not a recognised query parameter";
  }
}

/**
 * Validates every part of a request against the operation's schemas, collecting one error per
 * offending field, each saying where it was (`in`: query, body, path). The rules are the same
 * for every route:
 * - a query parameter the route does not define is a 422, whether or not it defines others;
 * - a route with a body needs one: an empty body is not read as `{}` (a spending route must
 *   never act on a request whose body was lost), unless the route says its body is optional.
 */
export function validateRequest(op: Operation, req: Request): RequestInput {
  const errors: FieldError[] = [];
  // No resource has such an id, so a path parameter like that is simply not found.
  if (unstorableString(req.params) !== undefined) throw new AppError("not_found", `No resource at ${quoted(req.path)}.`);
  for (const [where, schema, value] of [
    ["query", op.query, req.query],
    ["body", op.body, req.body],
  ] as const) {
    const checked = where === "query" || (schema && !op.protocolBody);
    const bad = checked ? unstorableString(value) : undefined;
    if (bad !== undefined) errors.push({ field: bad || where, in: where, message: UNSTORABLE_MESSAGE });
  }
  if (errors.length > 0) throw validationFailed("The request has text that cannot be stored", errors);

  const params = parsePart(op.params, req.params, errors, "path");
  let query: unknown;
  if (op.query) query = parsePart(op.query, req.query, errors, "query");
  else
    for (const name of Object.keys(req.query ?? {}))
      errors.push({ field: name, in: "query", message: "is not a recognised query parameter: this route takes none" });
  let body: unknown;
  if (op.body) {
    if (bodySent(req)) body = parsePart(op.body, req.body, errors, "body");
    else if (op.bodyRequired === false) body = parsePart(op.body, {}, errors, "body");
    else {
      const defaults = op.body.safeParse({}).success ? " ({} takes the defaults)" : "";
      errors.push({ field: "body", in: "body", message: `is required: send a JSON object${defaults}` });
    }
  }
  if (errors.length > 0) {
    throw validationFailed(`The request has ${errors.length} invalid field${errors.length === 1 ? "" : "s"}`, errors);
  }
  return { params, query, body };
}

function parsePart(schema: z.ZodType | undefined, input: unknown, errors: FieldError[], where: FieldLocation): unknown {
  if (!schema) return undefined;
  const before = errors.length;
  const parsed = parseFields(schema, input, errors);
  tag(errors, before, where);
  return parsed;
}

/** The part of a request a field belongs to, by the operation's schemas (its first path segment). */
function locate(op: Operation, field: string): FieldLocation {
  const name = field.split(".")[0]!;
  if (name === "Idempotency-Key") return "header";
  if (op.params && name in op.params.shape) return "path";
  if (op.query && name in op.query.shape) return "query";
  return op.body ? "body" : "query";
}

/**
 * A validation error raised past the schemas (by core, which knows nothing of HTTP), with each
 * field's `in` filled from the operation's schemas, so every 422 says where its fields were.
 */
export function locateFieldErrors(op: Operation, error: AppError): AppError {
  if (!error.errors || error.errors.every((e) => e.in)) return error;
  const errors = error.errors.map((e) => (e.in ? e : { ...e, in: locate(op, e.field) }));
  return new AppError(error.code, error.detail, { errors, headers: error.headers, extra: error.extra, cause: error.cause });
}

/** A request's fingerprint: method, URL (with its query) and the exact body bytes. */
export function fingerprint(req: Request): string {
  const raw = (req as { rawBody?: Buffer }).rawBody ?? Buffer.alloc(0);
  return createHash("sha256").update(`${req.method} ${req.originalUrl}\n`).update(raw).digest("hex");
}
