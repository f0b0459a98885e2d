import { index, integer, json, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";

/**
 * A request made with an Idempotency-Key, and the response it got, so a retry with the same key
 * and the same request gets the same response instead of doing the thing twice. `scope` is the
 * account (or the paying wallet); keys live 24 hours.
 */
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    scope: text("scope").notNull(),
    key: text("key").notNull(),
    /** Method, path and body, hashed: the same key with another request is refused. */
    requestHash: text("request_hash").notNull(),
    status: text("status").$type<"in_progress" | "done">().notNull(),
    responseStatus: integer("response_status"),
    responseBody: json("response_body"),
    createdAt: timestamptz("created_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.scope, t.key] }), index("idempotency_created_idx").on(t.createdAt)],
);
