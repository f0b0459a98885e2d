import type { Core } from "../context.js";
import { AppError } from "../errors.js";
import { type PushCredential, pushContext } from "./push-context.js";
import { checkTransfer, transferCall } from "./transfer.js";

/** A turn's answer as the context endpoint takes it: text, a transfer to a person, or both. */
export interface TurnAnswer {
  text?: string | undefined;
  final: boolean;
  end_call: boolean;
  transfer_to?: string | undefined;
  transfer_mode?: "cold" | "warm" | undefined;
  whisper?: string | undefined;
}

/**
 * Answers a live turn (POST /v1/calls/{call_id}/context, MCP push_context). With `transfer_to`,
 * the answer hands the call to a person (core/calls/transfer.ts): `text`, if given, is spoken
 * first ("Let me put you through"), but only once the transfer is known to be possible, so a
 * refused transfer leaves the turn unanswered and nothing spoken.
 */
export async function answerTurn(core: Core, credential: PushCredential, callId: string, turnId: string, answer: TurnAnswer) {
  if (answer.transfer_to === undefined) {
    if (answer.text === undefined) {
      const message = "text is required (or transfer_to)";
      throw new AppError("validation_error", `The answer is refused: ${message}.`, { errors: [{ field: "text", message }] });
    }
    return pushContext(core, credential, { callId, turnId, text: answer.text, final: answer.final, endCall: answer.end_call });
  }
  await checkTransfer(core, credential, callId);
  const spoken = answer.text === undefined ? null : await pushContext(core, credential, { callId, turnId, text: answer.text, final: true, endCall: false });
  const call = await transferCall(core, credential, {
    callId,
    toNumber: answer.transfer_to,
    mode: answer.transfer_mode ?? "cold",
    whisper: answer.whisper,
    answersTurn: turnId,
  });
  return {
    call_id: callId,
    turn_id: turnId,
    turn_status: "answered" as const,
    spoken_at: spoken?.spoken_at ?? core.now().toISOString(),
    call_ending: false,
    transfer: { to_number: answer.transfer_to, mode: answer.transfer_mode ?? ("cold" as const), status: call.transfer_status ?? ("dialing" as const) },
  };
}
