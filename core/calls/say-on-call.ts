import { and, eq } from "drizzle-orm";
import type { Core } from "../context.js";
import { calls } from "../db/schema/calls.js";
import { transcriptEntries } from "../db/schema/transcript-entries.js";
import { turns } from "../db/schema/turns.js";
import { AppError, notFound } from "../errors.js";
import type { CallRow } from "./call-records.js";
import { endCall } from "./end-call.js";
import { TERMINAL_STATUSES } from "./schemas.js";

/** The refusal of an act on a call that cannot take it now: ended (410), or not yet connected (409). */
export function notLive(call: Pick<CallRow, "callId" | "status">, what: string): AppError | null {
  if (TERMINAL_STATUSES.has(call.status)) return new AppError("call_ended", `Call ${call.callId} has ended (${call.status}); ${what} cannot reach it.`);
  if (call.status !== "in-progress") {
    return new AppError(
      "call_not_in_progress",
      `Call ${call.callId} is ${call.status}, not connected yet; ${what} needs a connected call. Wait for it to be answered.`,
    );
  }
  return null;
}

/**
 * The agent speaks a line nobody asked for ("Are you still there?"): spoken to the far party and
 * added to the transcript as `assistant`, opening and answering no turn. Under the call's row
 * lock (as an utterance and a push take it), so it is refused (409 `turn_open`) while a caller
 * turn waits for its answer: the answer goes through the turn, and the agent never talks over it.
 */
export async function sayOnCall(core: Core, accountId: string, callId: string, input: { text: string; end_call: boolean }) {
  const now = core.now();
  const call = await core.db.transaction(async (tx) => {
    const [row] = await tx
      .select()
      .from(calls)
      .where(and(eq(calls.callId, callId), eq(calls.accountId, accountId)))
      .for("update");
    if (!row) throw notFound("call", callId);
    const refusal = notLive(row, "a line");
    if (refusal) throw refusal;
    const [open] = await tx
      .select({ turnId: turns.turnId })
      .from(turns)
      .where(and(eq(turns.callId, callId), eq(turns.status, "open")));
    if (open) {
      throw new AppError(
        "turn_open",
        `Turn ${open.turnId} is waiting for its answer: answer it with POST /v1/calls/${callId}/context?turn_id=${open.turnId} instead of an unprompted line.`,
        { extra: { turn_id: open.turnId } },
      );
    }
    await tx.insert(transcriptEntries).values({ callId, role: "assistant", text: input.text, turnId: null, createdAt: now });
    return row;
  });
  await core.carrier.speak(callId, { text: input.text, final: true, turnId: null });
  if (input.end_call) await endCall(core, call, "agent");
  return { call_id: callId, spoken_at: now.toISOString(), call_ending: input.end_call };
}
