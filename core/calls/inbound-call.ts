import { and, eq } from "drizzle-orm";
import { callRate, startCallBilling } from "../billing/call-billing.js";
import { balanceOf } from "../billing/ledger.js";
import type { InboundCallDecision } from "../carrier/carrier.js";
import type { Core } from "../context.js";
import type { Transaction } from "../db/database.js";
import { agents } from "../db/schema/agents.js";
import { calls } from "../db/schema/calls.js";
import { numbers } from "../db/schema/numbers.js";
import { recordEvent } from "../events/events.js";
import { newId } from "../ids.js";
import { resolveVoiceId } from "../voices/account-voice.js";
import { sessionStart } from "../webhooks/protocol2.js";
import { CALL_STATUS_CHANNEL, recordGreeting } from "./call-status.js";
import { recordingNotice, writeRecordingNotice } from "./recordings.js";
import { sessionKey } from "./turns.js";

/**
 * A call arriving on a number: the agent that owns the number answers at once and hears
 * `call.received`. A number with no agent (or no longer active) is not in service. The carrier's
 * id of the call is unique: a carrier repeating its report of the same call (a retried webhook,
 * in any process) gets the call it already has, never a second one.
 */
export async function receiveInboundCall(core: Core, call: { to: string; from: string; carrierRef: string }): Promise<InboundCallDecision> {
  const now = core.now();
  const sameCall = async (tx: Transaction): Promise<InboundCallDecision | null> => {
    const [known] = await tx.select({ callId: calls.callId }).from(calls).where(eq(calls.carrierRef, call.carrierRef));
    return known ? { accepted: true, callId: known.callId } : null;
  };
  return core.db.transaction(async (tx): Promise<InboundCallDecision> => {
    const known = await sameCall(tx);
    if (known) return known;
    const [number] = await tx
      .select()
      .from(numbers)
      .where(and(eq(numbers.phoneNumber, call.to), eq(numbers.status, "active")));
    if (!number?.agentId) return { accepted: false, reason: "not_in_service" };
    const rate = callRate(core, "inbound");
    // An account that cannot pay the first minute does not answer.
    if ((await balanceOf(tx, number.accountId)) < rate * 60) return { accepted: false, reason: "insufficient_balance" };
    const [agent] = await tx.select().from(agents).where(eq(agents.agentId, number.agentId));
    const isOwnerCall = agent!.ownerNumber !== null && agent!.ownerNumber === call.from;
    const callId = newId("call");
    const [row] = await tx
      .insert(calls)
      .values({
        callId,
        accountId: number.accountId,
        agentId: number.agentId,
        numberId: number.numberId,
        direction: "inbound",
        fromNumber: call.from,
        toNumber: call.to,
        status: "in-progress",
        isOwnerCall,
        voiceId: await resolveVoiceId(tx, number.accountId, agent!.voiceId),
        carrierRef: call.carrierRef,
        rateMicrosPerSecond: rate,
        greeting: agent!.greeting,
        answeredAt: now,
        record: number.recordInbound,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing({ target: calls.carrierRef })
      .returning();
    // The same report arriving twice at once: the other one recorded the call.
    if (!row) return (await sameCall(tx))!;
    await startCallBilling(core, tx, row!);
    if (row!.record) await writeRecordingNotice(core, tx, callId, now);
    if (row!.greeting) await recordGreeting(tx, callId, row!.greeting, now);
    await recordEvent(
      core,
      tx,
      {
        accountId: number.accountId,
        agentId: number.agentId,
        type: "call.received",
        payload: {
          call_id: callId,
          direction: "inbound",
          from_number: call.from,
          to_number: call.to,
          number_id: number.numberId,
          is_owner_call: isOwnerCall,
          answered_at: now.toISOString(),
        },
        sessionMessage: (envelope, webhook) =>
          sessionStart(tx, envelope.event_id, row!, webhook.capabilities.includes("briefing"), sessionKey(row!.agentId, callId)),
      },
      now,
    );
    // Within the transaction: an announcement that cannot be sent leaves no call behind.
    await core.bus.publish(CALL_STATUS_CHANNEL, { call_id: callId, status: "in-progress" }, { tx });
    return { accepted: true, callId, recordingNotice: recordingNotice(core, row!.record) };
  });
}
