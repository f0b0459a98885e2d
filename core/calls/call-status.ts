import { and, eq } from "drizzle-orm";
import { settleCallBilling, startCallBilling } from "../billing/call-billing.js";
import { formatMicros } from "../billing/money.js";
import { settleTransferBilling } from "../billing/transfer-billing.js";
import type { EndedBy } from "../carrier/carrier.js";
import type { Core } from "../context.js";
import type { Transaction } from "../db/database.js";
import { type CallStatus, calls } from "../db/schema/calls.js";
import { transcriptEntries } from "../db/schema/transcript-entries.js";
import { turns } from "../db/schema/turns.js";
import { recordEvent } from "../events/events.js";
import { deliveryTarget, protocol2, recordSessionMessage } from "../events/routing.js";
import type { EventType } from "../events/schemas.js";
import { sessionEnd, sessionStart } from "../webhooks/protocol2.js";
import { type CallRow, readTranscript, transcriptUrl } from "./call-records.js";
import { writeRecordingNotice } from "./recordings.js";
import { TERMINAL_STATUSES } from "./schemas.js";
import { sessionKey } from "./turns.js";

/** The bus channel on which every call status change is announced (ids and status only). */
export const CALL_STATUS_CHANNEL = "calls.status";

const ENDING_EVENTS: Partial<Record<CallStatus, EventType>> = {
  completed: "call.completed",
  busy: "call.busy",
  "no-answer": "call.no-answer",
  failed: "call.failed",
  canceled: "call.canceled",
};

// A call only moves forward: queued, ringing, in-progress, then one of the ends.
const PROGRESS: Record<CallStatus, number> = { queued: 0, ringing: 1, "in-progress": 2, completed: 3, busy: 3, "no-answer": 3, failed: 3, canceled: 3 };

/**
 * Moves a call to a new status, with its events, in one transaction. Carriers repeat themselves
 * and report out of order: a report that would not move the call forward (a repeat, a `ringing`
 * after the answer, anything after the end) changes nothing. A call ended before it was answered
 * is `canceled`, not `completed`, unless the carrier measured talk time (`durationSeconds`), which
 * proves it was answered (its answer report was lost or is late). That measured time, when given,
 * is the call's duration and its bill. Returns the updated row, or null when nothing changed.
 */
export async function applyCallStatus(
  core: Core,
  callId: string,
  status: CallStatus,
  endedBy?: EndedBy,
  options: { at?: Date; durationSeconds?: number | undefined } = {},
): Promise<CallRow | null> {
  const updated = await core.db.transaction(async (tx) => {
    const [call] = await tx.select().from(calls).where(eq(calls.callId, callId)).for("update");
    if (!call || PROGRESS[status] <= PROGRESS[call.status]) return null;
    const measured = options.durationSeconds;
    // `at`: when it really happened (a call that ran out of money ends when its paid time did).
    const now = options.at ?? core.now();
    const answeredAt = call.answeredAt ?? (status === "completed" && measured ? new Date(now.getTime() - measured * 1000) : null);
    const next: CallStatus = status === "completed" && !answeredAt ? "canceled" : status;
    const changes: Partial<CallRow> = { status: next, updatedAt: now };
    if (next === "in-progress") changes.answeredAt = now;
    else if (answeredAt && !call.answeredAt) changes.answeredAt = answeredAt;
    if (TERMINAL_STATUSES.has(next)) {
      changes.endedAt = now;
      changes.endedBy = endedBy ?? "carrier";
      changes.durationSeconds = !answeredAt ? 0 : (measured ?? Math.ceil((now.getTime() - answeredAt.getTime()) / 1000));
    }
    let [row] = await tx.update(calls).set(changes).where(eq(calls.callId, callId)).returning();
    if (next === "in-progress") await startCallBilling(core, tx, row!);
    // A recorded call's notice is heard first, then the greeting, which the carrier speaks as the
    // callee's audio connects (see Carrier.placeCall).
    if (next === "in-progress" && row!.record) await writeRecordingNotice(core, tx, callId, now);
    if (next === "in-progress" && row!.greeting) await recordGreeting(tx, row!.callId, row!.greeting, now);
    if (TERMINAL_STATUSES.has(next)) {
      row = await settleCallBilling(core, tx, row!);
      row = await settleTransferBilling(core, tx, row!);
      await recordEnding(core, tx, row!);
    }
    if (next === "in-progress" && row!.direction === "outbound") await startOutboundSession(core, tx, row!);
    // Within the transaction: an announcement that cannot be sent leaves the status unchanged.
    await core.bus.publish(CALL_STATUS_CHANNEL, { call_id: callId, status: row!.status }, { tx });
    return row!;
  });
  if (updated && TERMINAL_STATUSES.has(updated.status)) core.callEngine.turnClosed(callId);
  return updated;
}

/** The greeting, spoken as the call was answered: the transcript's first line, answering no turn. */
export async function recordGreeting(tx: Transaction, callId: string, text: string, at: Date): Promise<void> {
  await tx.insert(transcriptEntries).values({ callId, role: "assistant", text, turnId: null, createdAt: at });
}

/** An answered outbound call opens a session for a protocol-2 runtime (inbound calls do so with call.received). */
async function startOutboundSession(core: Core, tx: Transaction, call: CallRow): Promise<void> {
  const target = await deliveryTarget(tx, call.agentId, core.now());
  const briefing = protocol2(target)?.has("briefing") ?? false;
  await recordSessionMessage(core, tx, target, {
    accountId: call.accountId,
    agentId: call.agentId,
    build: (id) => sessionStart(tx, id, call, briefing, sessionKey(call.agentId, call.callId)),
  });
}

/** The events of a call's end, and the end of any turn still open. */
async function recordEnding(core: Core, tx: Transaction, call: CallRow): Promise<void> {
  const now = call.endedAt!;
  await tx
    .update(turns)
    .set({ status: "abandoned", closedAt: now })
    .where(and(eq(turns.callId, call.callId), eq(turns.status, "open")));
  const base = { accountId: call.accountId, agentId: call.agentId };
  await recordEvent(
    core,
    tx,
    {
      ...base,
      type: ENDING_EVENTS[call.status]!,
      // A session exists only for a call that connected.
      ...(call.answeredAt ? { sessionMessage: sessionEnd } : {}),
      payload: {
        call_id: call.callId,
        direction: call.direction,
        from_number: call.fromNumber,
        to_number: call.toNumber,
        status: call.status,
        is_owner_call: call.isOwnerCall,
        answered_at: call.answeredAt?.toISOString() ?? null,
        ended_at: now.toISOString(),
        duration_seconds: call.durationSeconds,
        billed_seconds: call.billedSeconds,
        charge: formatMicros(call.chargedMicros),
        currency: "USD",
        ended_by: call.endedBy,
        transcript_url: transcriptUrl(core, call.callId),
        answered_by: call.answeredBy,
        voicemail_left: call.voicemailLeftAt !== null,
      },
    },
    now,
  );
  if (call.isOwnerCall && call.status === "completed") {
    // What the owner said is a task for the agent: the human turns are instructions.
    const transcript = await readTranscript(tx, call.callId);
    await recordEvent(
      core,
      tx,
      {
        ...base,
        type: "call.owner_task",
        payload: {
          call_id: call.callId,
          from_number: call.fromNumber,
          instructions: transcript.filter((l) => l.role === "user").map((l) => l.text),
          transcript,
          transcript_url: transcriptUrl(core, call.callId),
        },
      },
      now,
    );
  }
}
