import { hangupCall } from "../../core/calls/hangup-call.js";
import { placeCall } from "../../core/calls/place-call.js";
import { pushContext } from "../../core/calls/push-context.js";
import { getCall, getTranscript, listCalls } from "../../core/calls/read-calls.js";
import { sayOnCall } from "../../core/calls/say-on-call.js";
import {
  Call,
  CallIdParams,
  ContextPushBody,
  ContextPushQuery,
  ContextPushResult,
  DigitsBody,
  DigitsResult,
  ListCallsQuery,
  PlaceCallBody,
  SayBody,
  SayResult,
  Transcript,
} from "../../core/calls/schemas.js";
import { sendDigits } from "../../core/calls/send-digits.js";
import { listOf } from "../../core/schemas/common.js";
import { defineRoute } from "../http/route.js";

const tags = ["Calls"];

export const callRoutes = [
  defineRoute({
    operationId: "placeCall",
    method: "post",
    path: "/v1/calls",
    summary: "Place a call",
    description:
      "Calls `to_number` from the agent's number (`from_number`, one of the agent's own active numbers, else its oldest; any other is a 422 naming `from_number`). " +
      "`greeting` is spoken as soon as the callee answers, and recorded in the transcript as `assistant`; it opens no turn. " +
      "An agent with no active number gets 400 `no_active_number`; a balance that does not cover the first minute, 402 `insufficient_balance`. " +
      "Talk time is billed per second while the call runs, and the service ends the call when the balance runs out. Send an Idempotency-Key to make retries safe.",
    tags,
    auth: "api_key",
    body: PlaceCallBody,
    response: { status: 201, description: "The call, with its status so far", schema: Call },
    errors: [402, 404, 409, 502],
    handler: ({ core, auth, body }) => placeCall(core, auth.accountId, body),
  }),
  defineRoute({
    operationId: "listCalls",
    method: "get",
    path: "/v1/calls",
    summary: "List calls",
    description: "Newest first.",
    tags,
    auth: "api_key",
    query: ListCallsQuery,
    response: { status: 200, description: "A page of calls", schema: listOf(Call).meta({ id: "CallList" }) },
    errors: [404],
    handler: ({ core, auth, query }) => listCalls(core, auth.accountId, query),
  }),
  defineRoute({
    operationId: "getCall",
    method: "get",
    path: "/v1/calls/{call_id}",
    summary: "Get a call",
    tags,
    auth: "api_key",
    params: CallIdParams,
    response: { status: 200, description: "The call", schema: Call },
    handler: ({ core, auth, params }) => getCall(core, auth.accountId, params.call_id),
  }),
  defineRoute({
    operationId: "getTranscript",
    method: "get",
    path: "/v1/calls/{call_id}/transcript",
    summary: "Get a call's transcript",
    description: "A bare array of `{role, text, timestamp}`, in the order spoken.",
    tags,
    auth: "api_key",
    params: CallIdParams,
    response: { status: 200, description: "The transcript", schema: Transcript },
    handler: ({ core, auth, params }) => getTranscript(core, auth.accountId, params.call_id),
  }),
  defineRoute({
    operationId: "hangupCall",
    method: "post",
    path: "/v1/calls/{call_id}/hangup",
    summary: "Hang up a call",
    description: "A connected call becomes `completed`, a ringing one `canceled`. Hanging up an ended call returns it unchanged.",
    tags,
    auth: "api_key",
    params: CallIdParams,
    response: { status: 200, description: "The call after hanging up", schema: Call },
    handler: ({ core, auth, params }) => hangupCall(core, auth.accountId, params.call_id),
  }),
  defineRoute({
    operationId: "pushContext",
    method: "post",
    path: "/v1/calls/{call_id}/context",
    summary: "Answer a live caller turn",
    description:
      "Speaks `text` to the caller and adds it to the transcript. Authorized by the event's `push_token` or an API key. " +
      "409 `turn_stale` (the caller spoke again), `turn_cancelled` (the caller interrupted) or `turn_answered`: discard the answer. 410 `call_ended`: abandon the work.",
    tags,
    auth: "api_key_or_push_token",
    params: CallIdParams,
    query: ContextPushQuery,
    body: ContextPushBody,
    response: { status: 200, description: "Spoken", schema: ContextPushResult },
    errors: [409, 410],
    handler: ({ core, auth, params, query, body }) =>
      pushContext(core, auth.kind === "push_token" ? { pushToken: auth.token } : { accountId: auth.accountId }, {
        callId: params.call_id,
        turnId: query.turn_id,
        text: body.text,
        final: body.final,
        endCall: body.end_call,
      }),
  }),
  defineRoute({
    operationId: "sayOnCall",
    method: "post",
    path: "/v1/calls/{call_id}/say",
    summary: "Say something unprompted on a live call",
    description:
      'Speaks `text` to the other party now ("Are you still there?") and adds it to the transcript as `assistant`; it opens and answers no turn. ' +
      "409 `turn_open` while a caller turn waits for its answer (answer it with a context push instead), 409 `call_not_in_progress` before the call is answered, 410 `call_ended` after. " +
      "`end_call: true` hangs up after the line.",
    tags,
    auth: "api_key",
    params: CallIdParams,
    body: SayBody,
    response: { status: 200, description: "Spoken", schema: SayResult },
    errors: [404, 409, 410],
    handler: ({ core, auth, params, body }) => sayOnCall(core, auth.accountId, params.call_id, body),
  }),
  defineRoute({
    operationId: "sendDigits",
    method: "post",
    path: "/v1/calls/{call_id}/digits",
    summary: "Press keys on a live call",
    description:
      "Plays keypad tones into the call, for a phone menu at the other end: `0-9`, `*`, `#`, and `w` for a half-second pause, at most 32. " +
      "Not billed, and not part of the transcript. 409 `call_not_in_progress` before the call is answered, 410 `call_ended` after.",
    tags,
    auth: "api_key",
    params: CallIdParams,
    body: DigitsBody,
    response: { status: 200, description: "Sent", schema: DigitsResult },
    errors: [404, 409, 410],
    handler: ({ core, auth, params, body }) => sendDigits(core, auth.accountId, params.call_id, body.digits),
  }),
];
