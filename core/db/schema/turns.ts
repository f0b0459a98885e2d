import { sql } from "drizzle-orm";
import { index, integer, pgTable, text } from "drizzle-orm/pg-core";
import { timestamptz } from "../columns.js";
import { calls } from "./calls.js";

export type TurnStatus = "open" | "answered" | "stale" | "cancelled" | "abandoned";

/**
 * A live caller turn: opened by a finished caller utterance, answered by one final context push.
 * A newer utterance makes it stale (or amends it, for runtimes that declared supports_amend), an
 * interruption cancels it, the end of the call abandons it.
 */
export const turns = pgTable(
  "turns",
  {
    turnId: text("turn_id").primaryKey(),
    callId: text("call_id")
      .notNull()
      .references(() => calls.callId, { onDelete: "cascade" }),
    text: text("text").notNull(),
    /** `speech`, or `dtmf` for keypad digits. */
    input: text("input").$type<"speech" | "dtmf">().notNull().default("speech"),
    status: text("status").$type<TurnStatus>().notNull().default("open"),
    interimCount: integer("interim_count").notNull().default(0),
    openedAt: timestamptz("opened_at").notNull().defaultNow(),
    closedAt: timestamptz("closed_at"),
    fillerSpokenAt: timestamptz("filler_spoken_at"),
  },
  (t) => [
    index("turns_call_idx").on(t.callId, t.turnId),
    // A call's open turn (at most one), found without reading the turns it had before (a new
    // utterance stales it, the end of the call abandons it): a long call's turn costs what a short one's does.
    index("turns_open_idx").on(t.callId).where(sql`status = 'open'`),
  ],
);
