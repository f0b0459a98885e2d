import { bigint, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { timestamps, timestamptz } from "../columns.js";
import { accountIdColumn } from "./accounts.js";

/**
 * A call's recording, once the carrier has finished it (one per call). The audio stays at the
 * carrier (`carrier_ref`: Twilio's RecordingSid) and is proxied to the account; deleting it
 * deletes it at the carrier and keeps this row, marked deleted, for the bill.
 */
export const recordings = pgTable(
  "recordings",
  {
    recordingId: text("recording_id").primaryKey(),
    accountId: accountIdColumn(),
    /** Plain ids: the recording row outlives a deleted agent, as the ledger does. */
    agentId: text("agent_id").notNull(),
    callId: text("call_id").notNull(),
    carrierRef: text("carrier_ref").notNull(),
    durationSeconds: integer("duration_seconds").notNull(),
    status: text("status").$type<"ready" | "deleted">().notNull().default("ready"),
    /** What its storage was charged (the first month, at ready). */
    chargedMicros: bigint("charged_micros", { mode: "number" }).notNull().default(0),
    deletedAt: timestamptz("deleted_at"),
    ...timestamps,
  },
  (t) => [uniqueIndex("recordings_call_idx").on(t.callId), index("recordings_account_idx").on(t.accountId, t.recordingId)],
);
