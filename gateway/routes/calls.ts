import { answerTurn } from "../../core/calls/answer-turn.js";
import { hangupCall } from "../../core/calls/hangup-call.js";
import { placeCall } from "../../core/calls/place-call.js";
import { getCall, getTranscript, listCalls } from "../../core/calls/read-calls.js";
import {
  Call,
  CallIdParams,
  ContextPushBody,
  ContextPushQuery,
  ContextPushResult,
  ListCallsQuery,
  PlaceCallBody,
  Transcript,
  TransferBody,
} from "../../core/calls/schemas.js";
import { transferByAccount } from "../../core/calls/transfer.js";
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
      "Calls `to_number` from the agent's number. An agent with no active number gets 400 `no_active_number`; a balance that does not cover the first minute, 402 `insufficient_balance`. " +
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
      "409 `turn_stale` (the caller spoke again), `turn_cancelled` (the caller interrupted) or `turn_answered`: discard the answer. 410 `call_ended`: abandon the work. " +
      "`transfer_to` answers the turn by handing the call to a person (after speaking `text`, if given), as POST /v1/calls/{call_id}/transfer.",
    tags,
    auth: "api_key_or_push_token",
    params: CallIdParams,
    query: ContextPushQuery,
    body: ContextPushBody,
    response: { status: 200, description: "Spoken", schema: ContextPushResult },
    errors: [402, 409, 410],
    handler: ({ core, auth, params, query, body }) =>
      answerTurn(core, auth.kind === "push_token" ? { pushToken: auth.token } : { accountId: auth.accountId }, params.call_id, query.turn_id, body),
  }),
  defineRoute({
    operationId: "transferCall",
    method: "post",
    path: "/v1/calls/{call_id}/transfer",
    summary: "Transfer a call to a person",
    description:
      "Hands a connected call to `to_number`. `cold` (default): the caller is put through and the agent leaves the call at once; if nobody answers, the call ends. " +
      "`warm`: `whisper` is spoken to the person when they answer, before the caller is bridged; if nobody answers (busy, no answer, failed, or the 30 s timeout) " +
      "the caller comes back to the agent with a new `call.utterance` whose text says why (`[transfer failed: no-answer]`). Events `call.transfer.started`, " +
      "`call.transfer.answered`, `call.transfer.failed`. The bridged leg is billed per second at the outbound rate; its first minute must be covered (402). " +
      "409 `transfer_in_progress` (already being transferred) or `call_not_in_progress`; 410 `call_ended`; 422 names `to_number`.",
    tags,
    auth: "api_key",
    params: CallIdParams,
    body: TransferBody,
    response: { status: 200, description: "The call, with transfer_status dialing (or already how it went)", schema: Call },
    errors: [402, 404, 409, 410],
    handler: ({ core, auth, params, body }) => transferByAccount(core, auth.accountId, params.call_id, body),
  }),
];
