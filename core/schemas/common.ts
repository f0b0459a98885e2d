import { z } from "zod";

/** An E.164 phone number: `+`, country code, at most 15 digits in all. */
export const PhoneNumber = z
  .string()
  .regex(/^\+[1-9]\d{1,14}$/, "must be an E.164 phone number such as +14155550123")
  .meta({ description: "E.164 phone number", example: "+14155550123" });

/** An ISO-8601 UTC timestamp as the API writes them. */
export const Timestamp = z.iso.datetime().meta({ description: "ISO-8601 UTC timestamp", example: "2026-11-22T10:15:30.000Z" });

/**
 * An integer query parameter. Coercion would also accept null (as 0), which the documentation
 * generator then advertises as nullable; the explicit meta states what a query string can carry.
 */
export function queryInteger(options: { min: number; max: number; default: number; description: string }) {
  const { min, max, description } = options;
  return z.coerce
    .number()
    .int()
    .min(min)
    .max(max)
    .default(options.default)
    .meta({ type: "integer", minimum: min, maximum: max, default: options.default, description });
}

/**
 * `limit` and `offset` of every list: out-of-range values are a 422, never clamped.
 * Strict, like bodies: an unknown query parameter is a 422 rather than a filter silently ignored.
 */
export const Pagination = z.strictObject({
  limit: queryInteger({ min: 1, max: 100, default: 20, description: "Items per page" }),
  offset: queryInteger({ min: 0, max: 1_000_000, default: 0, description: "Items to skip" }),
});
export type Pagination = z.infer<typeof Pagination>;

/** The envelope of every list: `{data, limit, offset, has_more}`. */
export function listOf<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    limit: z.number().int(),
    offset: z.number().int(),
    has_more: z.boolean(),
  });
}

export interface Page<T> {
  data: T[];
  limit: number;
  offset: number;
  has_more: boolean;
}

/** Builds a page from rows fetched with `limit + 1`, the extra row only telling whether more exist. */
export function toPage<R, T>(rows: R[], page: Pagination, present: (row: R) => T): Page<T> {
  return {
    data: rows.slice(0, page.limit).map(present),
    limit: page.limit,
    offset: page.offset,
    has_more: rows.length > page.limit,
  };
}

/** A confirmation that something was deleted. */
export function deletedOf(idField: string) {
  return z.object({ [idField]: z.string(), deleted: z.literal(true) });
}
