import { and, asc, eq, isNull } from "drizzle-orm";
import { loadAgent } from "../agents/agents.js";
import { callRate, requireFirstMinute } from "../billing/call-billing.js";
import { carrierFailure } from "../carrier/carrier-errors.js";
import type { Core } from "../context.js";
import { calls } from "../db/schema/calls.js";
import { numbers } from "../db/schema/numbers.js";
import { AppError } from "../errors.js";
import { newId } from "../ids.js";
import { resolveVoiceId } from "../voices/account-voice.js";
import { loadCall, presentCall } from "./call-records.js";
import { applyCallStatus } from "./call-status.js";
import { recordingNotice } from "./recordings.js";

/** The 422 of a `from_number` that is not one of the agent's active numbers. */
function notAgentsNumber(agentId: string, fromNumber: string): AppError {
  const message = `is not one of agent ${agentId}'s active numbers`;
  return new AppError("validation_error", `from_number ${fromNumber} ${message}: call from a number the agent answers, or leave it out to use its oldest.`, {
    errors: [{ field: "from_number", message }],
  });
}

/**
 * Places an outbound call from the agent's number (`from_number`, else its oldest active one), if the balance covers
 * the first minute (402 otherwise). The call is recorded as queued before the carrier is asked,
 * so its progress reports always find it; talk time is paid from the moment it is answered. A
 * carrier that refuses (422 `to_number`, 409 number gone) or cannot be reached (502) leaves no call.
 */
export async function placeCall(
  core: Core,
  accountId: string,
  input: {
    agent_id: string;
    to_number: string;
    from_number?: string | undefined;
    greeting?: string | undefined;
    machine_detection?: "off" | "detect" | "leave_message" | undefined;
    voicemail_message?: string | undefined;
    record?: boolean | undefined;
  },
) {
  const machineDetection = input.machine_detection === "detect" || input.machine_detection === "leave_message" ? input.machine_detection : null;
  if (machineDetection === "leave_message" && !input.voicemail_message) {
    const message = "is required with machine_detection leave_message";
    throw new AppError("validation_error", `voicemail_message ${message}.`, { errors: [{ field: "voicemail_message", message, in: "body" }] });
  }
  const call = await core.db.transaction(async (tx) => {
    const agent = await loadAgent(tx, accountId, input.agent_id);
    const ownNumber = and(eq(numbers.agentId, agent.agentId), eq(numbers.status, "active"));
    const [number] = await tx
      .select()
      .from(numbers)
      .where(input.from_number === undefined ? ownNumber : and(ownNumber, eq(numbers.phoneNumber, input.from_number)))
      .orderBy(asc(numbers.numberId))
      .limit(1);
    if (!number && input.from_number !== undefined) throw notAgentsNumber(agent.agentId, input.from_number);
    if (!number) {
      throw new AppError("no_active_number", `Agent ${agent.agentId} has no active phone number. Buy one with POST /v1/numbers, then place the call.`);
    }
    const rate = callRate(core, "outbound");
    await requireFirstMinute(tx, accountId, rate);
    const [row] = await tx
      .insert(calls)
      .values({
        callId: newId("call"),
        accountId,
        agentId: agent.agentId,
        numberId: number.numberId,
        direction: "outbound",
        fromNumber: number.phoneNumber,
        toNumber: input.to_number,
        status: "queued",
        voiceId: await resolveVoiceId(tx, accountId, agent.voiceId),
        rateMicrosPerSecond: rate,
        greeting: input.greeting ?? null,
        machineDetection,
        voicemailMessage: machineDetection === "leave_message" ? input.voicemail_message! : null,
        record: input.record === true,
      })
      .returning();
    return row!;
  });

  try {
    const { carrierRef } = await core.carrier.placeCall({
      callId: call.callId,
      from: call.fromNumber,
      to: call.toNumber,
      voiceId: call.voiceId,
      greeting: call.greeting,
      machineDetection: call.machineDetection ?? undefined,
      recordingNotice: recordingNotice(core, call.record),
    });
    await core.db.update(calls).set({ carrierRef }).where(eq(calls.callId, call.callId));
  } catch (error) {
    const failure = carrierFailure(error, "to_number");
    if (failure instanceof AppError) {
      // The carrier refused or could not be reached: no call was placed, so none is recorded.
      // (Nothing was charged either: talk time is paid from the answer.) A report that arrived
      // meanwhile means the carrier did place it after all; then the call stands.
      const [dropped] = await core.db
        .delete(calls)
        .where(and(eq(calls.callId, call.callId), eq(calls.status, "queued"), isNull(calls.carrierRef)))
        .returning({ callId: calls.callId });
      if (dropped) throw failure;
    } else {
      core.logger.error({ err: error, call_id: call.callId }, "carrier refused the call");
      await applyCallStatus(core, call.callId, "failed", "carrier");
    }
  }
  return presentCall(await loadCall(core.db, accountId, call.callId));
}
