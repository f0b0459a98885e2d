import { and, asc, eq, sql } from "drizzle-orm";
import { formatMicros } from "../billing/money.js";
import type { Core } from "../context.js";
import type { Executor } from "../db/database.js";
import { preparedStatement } from "../db/prepared.js";
import { calls } from "../db/schema/calls.js";
import { transcriptEntries } from "../db/schema/transcript-entries.js";
import { notFound } from "../errors.js";
import { publicUrl } from "../public-url.js";
import type { Call } from "./schemas.js";

export type CallRow = typeof calls.$inferSelect;

export function presentCall(row: CallRow): Call {
  return {
    call_id: row.callId,
    agent_id: row.agentId,
    number_id: row.numberId,
    direction: row.direction,
    from_number: row.fromNumber,
    to_number: row.toNumber,
    status: row.status,
    is_owner_call: row.isOwnerCall,
    voice_id: row.voiceId,
    ended_by: row.endedBy as Call["ended_by"],
    created_at: row.createdAt.toISOString(),
    answered_at: row.answeredAt?.toISOString() ?? null,
    ended_at: row.endedAt?.toISOString() ?? null,
    duration_seconds: row.durationSeconds,
    billed_seconds: row.billedSeconds,
    // While the call runs, its bridged leg's prepaid time is counted apart (it joins at the end).
    charge: formatMicros(row.chargedMicros + (row.endedAt ? 0 : row.transferChargedMicros)),
    currency: "USD",
    answered_by: row.answeredBy,
    voicemail_left: row.voicemailLeftAt !== null,
    record: row.record,
    transferred_to: row.transferStatus === "bridged" ? row.transferTo : null,
    transfer_status: row.transferStatus,
  };
}

// Built once per handle: the hottest read of the API (GET /v1/calls/{id}, the softphone upgrade).
const accountCall = preparedStatement("load_call", (db, name) =>
  db
    .select()
    .from(calls)
    .where(and(eq(calls.callId, sql.placeholder("callId")), eq(calls.accountId, sql.placeholder("accountId"))))
    .prepare(name),
);

/** The account's call row, or a 404 for a missing or foreign id. */
export async function loadCall(db: Executor, accountId: string, callId: string): Promise<CallRow> {
  const [row] = await accountCall(db).execute({ callId, accountId });
  if (!row) throw notFound("call", callId);
  return row;
}

/** A call by id alone, for jobs that act on whatever account owns it. */
export async function loadCallById(db: Executor, callId: string): Promise<CallRow | undefined> {
  const [row] = await db.select().from(calls).where(eq(calls.callId, callId));
  return row;
}

/** Where the call's whole transcript is read; null when the service serves no HTTP (see publicUrl). */
export function transcriptUrl(core: Pick<Core, "baseUrl">, callId: string): string | null {
  return publicUrl(core, `/v1/calls/${callId}/transcript`);
}

/** The call's transcript, in the order it was spoken. */
export async function readTranscript(db: Executor, callId: string) {
  const rows = await db
    .select({ role: transcriptEntries.role, text: transcriptEntries.text, createdAt: transcriptEntries.createdAt })
    .from(transcriptEntries)
    .where(eq(transcriptEntries.callId, callId))
    .orderBy(asc(transcriptEntries.entryId));
  return rows.map((r) => ({ role: r.role, text: r.text, timestamp: r.createdAt.toISOString() }));
}
