import { and, eq } from "drizzle-orm";
import { tryCharge } from "../billing/ledger.js";
import { formatMicros } from "../billing/money.js";
import type { RecordingAudio } from "../carrier/carrier.js";
import { carrierFailure } from "../carrier/carrier-errors.js";
import type { Core } from "../context.js";
import type { Executor } from "../db/database.js";
import { recordings } from "../db/schema/recordings.js";
import { transcriptEntries } from "../db/schema/transcript-entries.js";
import { notFound } from "../errors.js";
import { recordEvent } from "../events/events.js";
import { newId } from "../ids.js";
import { publicUrl } from "../public-url.js";
import { loadCall, loadCallById } from "./call-records.js";

/** The notice a recorded call's other party hears first, or none when the call is not recorded. */
export function recordingNotice(core: Pick<Core, "config">, record: boolean): string | undefined {
  return record ? core.config.recordingNotice : undefined;
}

/** The notice is what the other party hears first on a recorded call: it is the transcript's first line. */
export async function writeRecordingNotice(core: Pick<Core, "config">, tx: Executor, callId: string, now: Date): Promise<void> {
  await tx.insert(transcriptEntries).values({ callId, role: "assistant", text: core.config.recordingNotice, createdAt: now });
}

/** Whole minutes of audio, rounded up (a recording of 0 s still stores its minute). */
function storedMinutes(durationSeconds: number): number {
  return Math.max(1, Math.ceil(durationSeconds / 60));
}

/**
 * The carrier finished a call's recording: it is kept (one per call; a repeated report changes
 * nothing), its first month of storage charged through the ledger, and `call.recording.ready`
 * sent. A balance that cannot pay for it gets no recording: it is deleted at the carrier.
 */
export async function applyRecordingReady(core: Core, report: { callId: string; carrierRef: string; durationSeconds: number }): Promise<void> {
  const now = core.now();
  const call = await loadCallById(core.db, report.callId);
  if (!call) return;
  const minutes = storedMinutes(report.durationSeconds);
  const price = minutes * core.config.rates.recordingPerMinuteMonth;
  const outcome = await core.db.transaction(async (tx) => {
    const recordingId = newId("rec");
    const [row] = await tx
      .insert(recordings)
      .values({
        recordingId,
        accountId: call.accountId,
        agentId: call.agentId,
        callId: call.callId,
        carrierRef: report.carrierRef,
        durationSeconds: report.durationSeconds,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing({ target: recordings.callId })
      .returning();
    if (!row) return "repeated" as const;
    const paid = await tryCharge(
      tx,
      {
        accountId: call.accountId,
        category: "recording",
        item: "recording.storage",
        description: `Recording of call ${call.callId}: ${minutes} min stored, first month`,
        callId: call.callId,
        quantity: minutes,
        at: now,
      },
      price,
    );
    if (!paid) {
      await tx.update(recordings).set({ status: "deleted", deletedAt: now, updatedAt: now }).where(eq(recordings.recordingId, recordingId));
      return "unpaid" as const;
    }
    await tx.update(recordings).set({ chargedMicros: price }).where(eq(recordings.recordingId, recordingId));
    await recordEvent(
      core,
      tx,
      {
        accountId: call.accountId,
        agentId: call.agentId,
        type: "call.recording.ready",
        payload: {
          call_id: call.callId,
          recording_id: recordingId,
          duration_s: report.durationSeconds,
          recording_url: publicUrl(core, `/v1/calls/${call.callId}/recording`),
          charge: formatMicros(price),
          currency: "USD",
        },
      },
      now,
    );
    return "kept" as const;
  });
  if (outcome === "unpaid") {
    core.logger.warn({ call_id: call.callId }, "the balance does not cover the recording's storage; it is deleted at the carrier");
    await core.carrier
      .deleteRecording({ carrierRef: report.carrierRef })
      .catch((error: unknown) => core.logger.error({ err: error, call_id: call.callId }, "the carrier did not delete an unpaid recording"));
  }
}

/** The account's call's recording, ready and not deleted, or a 404. */
async function readyRecording(core: Core, accountId: string, callId: string) {
  const call = await loadCall(core.db, accountId, callId);
  const [row] = await core.db
    .select()
    .from(recordings)
    .where(and(eq(recordings.callId, call.callId), eq(recordings.accountId, accountId), eq(recordings.status, "ready")));
  if (!row) throw notFound("recording of call", callId);
  return row;
}

/** The recording's audio, fetched from the carrier by the service (no carrier URL or credential reaches the client). */
export async function fetchRecording(core: Core, accountId: string, callId: string): Promise<RecordingAudio & { recordingId: string }> {
  const row = await readyRecording(core, accountId, callId);
  try {
    const audio = await core.carrier.fetchRecording({ carrierRef: row.carrierRef, durationSeconds: row.durationSeconds });
    return { ...audio, recordingId: row.recordingId };
  } catch (error) {
    throw carrierFailure(error, "call_id");
  }
}

/** Deletes the recording at the carrier, then here; afterwards it is a 404. */
export async function deleteRecording(core: Core, accountId: string, callId: string): Promise<void> {
  const row = await readyRecording(core, accountId, callId);
  try {
    await core.carrier.deleteRecording({ carrierRef: row.carrierRef });
  } catch (error) {
    throw carrierFailure(error, "call_id");
  }
  const now = core.now();
  await core.db.update(recordings).set({ status: "deleted", deletedAt: now, updatedAt: now }).where(eq(recordings.recordingId, row.recordingId));
}
