import { and, eq, isNull } from "drizzle-orm";
import type { AnsweredBy } from "../carrier/carrier.js";
import type { Core } from "../context.js";
import { calls } from "../db/schema/calls.js";
import { transcriptEntries } from "../db/schema/transcript-entries.js";
import { recordEvent } from "../events/events.js";
import { endCall } from "./end-call.js";
import { TERMINAL_STATUSES } from "./schemas.js";

/**
 * Machine detection's verdict on an outbound call (docs/decisions/0085-voicemail-and-recording.md).
 * Applied once: a repeated report changes nothing. `call.answered_by` tells the agent who answered;
 * with `leave_message` and a machine on a live call, the voicemail message is spoken (the carrier
 * reports a machine after its beep) and the call ends, and the event says so (`voicemail_left`).
 */
/** The bus channel on which a call's machine-detection verdict is announced, once committed. */
export const CALL_ANSWERED_BY_CHANNEL = "calls.answered_by";

export async function applyAnsweredBy(core: Core, callId: string, answeredBy: AnsweredBy): Promise<void> {
  const now = core.now();
  const applied = await core.db.transaction(async (tx) => {
    const [call] = await tx.select().from(calls).where(eq(calls.callId, callId)).for("update");
    if (!call || call.machineDetection === null || call.answeredBy !== null) return null;
    // leave_message always comes with its message (placeCall refuses it without one).
    const leaving = call.machineDetection === "leave_message" && answeredBy === "machine" && !TERMINAL_STATUSES.has(call.status);
    const [row] = await tx
      .update(calls)
      .set({ answeredBy, ...(leaving ? { voicemailLeftAt: now } : {}), updatedAt: now })
      .where(and(eq(calls.callId, callId), isNull(calls.answeredBy)))
      .returning();
    if (leaving) await tx.insert(transcriptEntries).values({ callId, role: "assistant", text: call.voicemailMessage!, createdAt: now });
    await recordEvent(
      core,
      tx,
      {
        accountId: call.accountId,
        agentId: call.agentId,
        type: "call.answered_by",
        payload: {
          call_id: callId,
          answered_by: answeredBy,
          machine_detection: call.machineDetection,
          voicemail_left: leaving,
          status: call.status,
        },
      },
      now,
    );
    // Within the transaction: an announcement that cannot be sent leaves the verdict unrecorded.
    await core.bus.publish(CALL_ANSWERED_BY_CHANNEL, { call_id: callId, answered_by: answeredBy }, { tx });
    return { row: row!, leaving };
  });
  if (!applied?.leaving) return;
  // After the beep: the message, then the line drops.
  await core.carrier.speak(callId, { text: applied.row.voicemailMessage!, final: true, turnId: null });
  await endCall(core, applied.row, "agent");
}
