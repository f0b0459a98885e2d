import type { z } from "zod";
import { AppError, type FieldError, quoted } from "../errors.js";

/** The most fields one validation error lists. */
export const MAX_LISTED_ERRORS = 20;

/**
 * The 422 for these field errors, its detail `${lead}: ` and the fields: each field name cut to
 * MAX_QUOTED_CHARS (core/errors.ts), and at most MAX_LISTED_ERRORS listed, `errors_omitted` counting the rest, so
 * a request of a thousand unknown megabyte-long names is answered in a few kilobytes.
 */
export function validationFailed(lead: string, errors: FieldError[]): AppError {
  const listed = errors.slice(0, MAX_LISTED_ERRORS).map((e) => ({ ...e, field: quoted(e.field) }));
  const omitted = errors.length - listed.length;
  const more = omitted > 0 ? ` and ${omitted} more` : "";
  return new AppError("validation_error", `${lead}: ${listed.map((e) => e.field).join(", ")}${more}.`, {
    errors: listed,
    ...(omitted > 0 ? { extra: { errors_omitted: omitted } } : {}),
  });
}

/**
 * Parses input with schema; on failure, appends one FieldError per problem, named by its dotted
 * path, and returns undefined. The REST routes and the MCP tools both report bad input this way.
 */
export function parseFields(schema: z.ZodType, input: unknown, errors: FieldError[]): unknown {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) errors.push({ field: [...issue.path, key].join("."), message: "is not a recognised field" });
      continue;
    }
    const field = issue.path.length > 0 ? issue.path.map(String).join(".") : "body";
    // Whatever the schema (string, enum, object), an absent value reads "is required".
    const missing = valueAt(input, issue.path) === undefined;
    errors.push({ field, message: missing ? (field === "body" ? "is required: send a JSON object" : "is required") : issue.message });
  }
  return undefined;
}

// PostgreSQL text and jsonb cannot hold U+0000 or a lone surrogate; refusing them at the edge
// means a client can never turn them into a database error (a 500).
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is the point: PostgreSQL cannot store it in text.
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const UNSTORABLE_MESSAGE = "contains a NUL character or unpaired UTF-16 surrogate, which cannot be stored";

/** An array or object being walked: the next of its entries to look at, and its name in its parent. */
interface Open {
  node: unknown[] | Record<string, unknown>;
  keys: string[] | null;
  next: number;
  name: string;
}

/**
 * The dotted path of the first unstorable string (or key) in value, "" for the root, or undefined.
 * Iterative, in document order (a key before what it holds): a value nested however deep costs no
 * stack, and a leaf costs a type check, its path built only for what is found.
 */
export function unstorableString(value: unknown): string | undefined {
  if (typeof value === "string") return UNSTORABLE.test(value) ? "" : undefined;
  if (value === null || typeof value !== "object") return undefined;
  const open: Open[] = [opened(value, "")];
  const pathTo = (name: string) => [...open.slice(1).map((o) => o.name), name].join(".");
  while (open.length > 0) {
    const top = open[open.length - 1]!;
    const { node, keys } = top;
    if (top.next === (keys ? keys.length : (node as unknown[]).length)) {
      open.pop();
      continue;
    }
    const index = top.next++;
    const key = keys ? keys[index]! : undefined;
    if (key !== undefined && UNSTORABLE.test(key)) return pathTo(key);
    const inner = key !== undefined ? (node as Record<string, unknown>)[key] : (node as unknown[])[index];
    if (typeof inner === "string") {
      if (UNSTORABLE.test(inner)) return pathTo(key ?? String(index));
    } else if (inner !== null && typeof inner === "object") open.push(opened(inner, key ?? String(index)));
  }
  return undefined;
}

function opened(node: object, name: string): Open {
  return Array.isArray(node) ? { node, keys: null, next: 0, name } : { node: node as Record<string, unknown>, keys: Object.keys(node), next: 0, name };
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
