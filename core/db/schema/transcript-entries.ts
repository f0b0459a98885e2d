import { bigserial, index, pgTable, text } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";
import { calls } from "./calls.js";

/** One line of a call's transcript: what the caller (`user`) or the agent (`assistant`) said. */
export const transcriptEntries = pgTable(
  "transcript_entries",
  {
    entryId: bigserial("entry_id", { mode: "number" }).primaryKey(),
    callId: text("call_id")
      .notNull()
      .references(() => calls.callId, { onDelete: "cascade" }),
    role: text("role").$type<"user" | "assistant">().notNull(),
    text: text("text").notNull(),
    turnId: text("turn_id"),
    createdAt: timestamptz("created_at").notNull().defaultNow(),
  },
  (t) => [index("transcript_call_idx").on(t.callId, t.entryId)],
);
