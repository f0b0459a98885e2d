import type { z } from "zod";
import type { FieldError } from "../errors.js";

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
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const UNSTORABLE_MESSAGE = "contains a NUL character or unpaired UTF-16 surrogate, which cannot be stored";

/** The dotted path of the first unstorable string (or key) in value, "" for the root, or undefined. */
export function unstorableString(value: unknown, path: string[] = []): string | undefined {
  if (typeof value === "string") return UNSTORABLE.test(value) ? path.join(".") : undefined;
  if (value === null || typeof value !== "object") return undefined;
  for (const [key, inner] of Object.entries(value)) {
    if (UNSTORABLE.test(key)) return [...path, key].join(".");
    const found = unstorableString(inner, [...path, key]);
    if (found !== undefined) return found;
  }
  return undefined;
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}
