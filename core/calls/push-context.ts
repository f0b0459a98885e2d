import type { Core } from "../context.js";
import type { TurnStatus } from "../db/schema/turns.js";
import { AppError, notFound } from "../errors.js";
import { relayLiveSince } from "../events/routing.js";
import { secondsSince } from "../metrics.js";
import { loadCallById } from "./call-records.js";
import { conversations } from "./conversation-cache.js";
import { endCall } from "./end-call.js";
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

// The whole leg is one server-side function (agentline_push_context, core/db/functions/): raw
// SQL with a fixed text, which the query builder cannot express.
const PUSH_CONTEXT = "select agentline_push_context($1, $2, $3, $4, $5::timestamptz, $6, $7::text[], $8::timestamptz) as r";
const TERMINAL_STATUS_ARRAY = `{${[...TERMINAL_STATUSES].join(",")}}`;

/**
 * Answers a live turn: the text is spoken to the far party and added to the transcript. The turn
 * changes state in one conditional update under the call's row lock, so of two racing final
 * pushes exactly one is spoken; the other gets 409 `turn_answered`. One round trip to the
 * database; the line is spoken once it is committed.
 */
export async function pushContext(core: Core, credential: PushCredential, push: ContextPush) {
  const started = performance.now();
  const now = core.now();
  const byToken = "pushToken" in credential;
  // A push token is an HMAC of the call id: checked before the database is asked anything.
  if (byToken && !isPushTokenFor(core, push.callId, credential.pushToken)) throw badPushToken();
  const [{ r: result }] = (await core.dbHandle.rows<{ r: Pushed }>(PUSH_CONTEXT, [
    push.callId,
    push.turnId,
    push.text,
    push.final,
    now.toISOString(),
    byToken ? null : credential.accountId,
    TERMINAL_STATUS_ARRAY,
    relayLiveSince(now).toISOString(),
  ])) as [{ r: Pushed }];
  switch (result.outcome) {
    case "no_call":
      throw byToken ? badPushToken() : notFound("call", push.callId);
    case "ended":
      throw new AppError("call_ended", `Call ${push.callId} has ended (${result.status}). Abandon the work.`);
    case "no_turn":
      throw notFound("turn", push.turnId);
    case "interim_refused": {
      const message = "interim lines need the streams_progress capability on this agent's service-relay/2 webhook";
      throw new AppError("validation_error", `final: false is refused: ${message}.`, { errors: [{ field: "final", message }] });
    }
    case "refused":
      throw refusal(result.turn_status, push.turnId);
  }
  conversations(core).append(push.callId, result.previous_entry_id, result.entry_id, { role: "assistant", text: push.text, timestamp: now.toISOString() });
  if (push.final) core.callEngine.turnClosed(push.callId, push.turnId);
  await core.carrier.speak(push.callId, { text: push.text, final: push.final, turnId: push.turnId });
  core.metrics.turnLeg.observe({ leg: "push" }, secondsSince(started));
  if (push.endCall) {
    const call = await loadCallById(core.db, push.callId);
    if (call) await endCall(core, call, "agent");
  }
  return {
    call_id: push.callId,
    turn_id: push.turnId,
    turn_status: push.final ? ("answered" as const) : ("open" as const),
    spoken_at: now.toISOString(),
    call_ending: push.endCall,
  };
}

type Pushed =
  | { outcome: "no_call" | "no_turn" | "interim_refused" }
  | { outcome: "ended"; status: string }
  | { outcome: "refused"; turn_status: TurnStatus }
  | { outcome: "pushed"; agent_id: string; account_id: string; previous_entry_id: number | null; entry_id: number };

function badPushToken(): AppError {
  return new AppError("unauthorized", "The push token is not valid for this call.", {
    headers: { "WWW-Authenticate": 'Bearer realm="agentline", error="invalid_token"' },
  });
}
