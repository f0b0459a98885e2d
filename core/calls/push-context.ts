import { and, eq, sql } from "drizzle-orm";
import type { Core } from "../context.js";
import { calls } from "../db/schema/calls.js";
import { transcriptEntries } from "../db/schema/transcript-entries.js";
import { turns, type TurnStatus } from "../db/schema/turns.js";
import { AppError, notFound } from "../errors.js";
import { deliveryTarget, protocol2 } from "../events/routing.js";
import { hangupCall } from "./hangup-call.js";
import { isPushTokenFor } from "./push-token.js";
import { TERMINAL_STATUSES } from "./schemas.js";

/** Who is pushing: a key of the owning account, or the call's own push token. */
export type PushCredential = { accountId: string } | { pushToken: string };

export interface ContextPush {
  callId: string;
  turnId: string;
  text: string;
  final: boolean;
  endCall: boolean;
}

function refusal(status: TurnStatus, turnId: string): AppError {
  switch (status) {
    case "stale":
      return new AppError("turn_stale", `Turn ${turnId} is stale: the caller has spoken again since. Discard this answer and answer the newer call.utterance.`);
    case "cancelled":
      return new AppError("turn_cancelled", `Turn ${turnId} was cancelled: the caller interrupted. Discard this answer.`);
    case "answered":
      return new AppError("turn_answered", `Turn ${turnId} has already been answered; only the first final push is spoken.`);
    default:
      return new AppError("turn_abandoned", `Turn ${turnId} was given up: its call.utterance could not be delivered. Discard this answer.`);
  }
}

/**
 * Answers a live turn: the text is spoken to the far party and added to the transcript. The turn
 * changes state in one conditional update under the call's row lock, so of two racing final
 * pushes exactly one is spoken; the other gets 409 `turn_answered`.
 */
export async function pushContext(core: Core, credential: PushCredential, push: ContextPush) {
  const now = core.now();
  const call = await core.db.transaction(async (tx) => {
    const [row] = await tx.select().from(calls).where(eq(calls.callId, push.callId)).for("update");
    if ("pushToken" in credential) {
      if (!row || !isPushTokenFor(core, push.callId, credential.pushToken)) {
        throw new AppError("unauthorized", "The push token is not valid for this call.", { headers: { "WWW-Authenticate": 'Bearer realm="agentline", error="invalid_token"' } });
      }
    } else if (!row || row.accountId !== credential.accountId) {
      throw notFound("call", push.callId);
    }
    if (TERMINAL_STATUSES.has(row.status)) throw new AppError("call_ended", `Call ${push.callId} has ended (${row.status}). Abandon the work.`);
    const [turn] = await tx.select().from(turns).where(and(eq(turns.turnId, push.turnId), eq(turns.callId, push.callId)));
    if (!turn) throw notFound("turn", push.turnId);
    if (!push.final) {
      const p2 = protocol2(await deliveryTarget(tx, row.agentId, now));
      if (p2 && !p2.has("streams_progress")) {
        const message = "interim lines need the streams_progress capability on this agent's service-relay/2 webhook";
        throw new AppError("validation_error", `final: false is refused: ${message}.`, { errors: [{ field: "final", message }] });
      }
    }
    const [moved] = await tx
      .update(turns)
      .set(push.final ? { status: "answered", closedAt: now } : { interimCount: sql`${turns.interimCount} + 1` })
      .where(and(eq(turns.turnId, push.turnId), eq(turns.status, "open")))
      .returning({ turnId: turns.turnId });
    if (!moved) throw refusal(turn.status, push.turnId);
    await tx.insert(transcriptEntries).values({ callId: push.callId, role: "assistant", text: push.text, turnId: push.turnId, createdAt: now });
    return row;
  });

  if (push.final) core.calls.turnClosed(push.callId, push.turnId);
  await core.carrier.speak(push.callId, { text: push.text, final: push.final, turnId: push.turnId });
  if (push.endCall) await hangupCall(core, call, "agent");
  return {
    call_id: push.callId,
    turn_id: push.turnId,
    turn_status: push.final ? ("answered" as const) : ("open" as const),
    spoken_at: now.toISOString(),
    call_ending: push.endCall,
  };
}
