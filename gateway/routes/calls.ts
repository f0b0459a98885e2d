import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { z } from "zod";
import { answerTurn } from "../../core/calls/answer-turn.js";
import { hangupCall } from "../../core/calls/hangup-call.js";
import { placeCall } from "../../core/calls/place-call.js";
import { getCall, getTranscript, listCalls } from "../../core/calls/read-calls.js";
import { deleteRecording, fetchRecording } from "../../core/calls/recordings.js";
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
  TransferBody,
} from "../../core/calls/schemas.js";
import { sendDigits } from "../../core/calls/send-digits.js";
import { transferByAccount } from "../../core/calls/transfer.js";
import { listOf } from "../../core/schemas/common.js";
import { defineRoute, Reply } from "../http/route.js";

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
      "`machine_detection` detect sends call.answered_by; leave_message also leaves `voicemail_message` on a machine and ends the call. `record` records the call after a spoken notice (call.recording.ready). " +
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
  defineRoute({
    operationId: "getCallRecording",
    method: "get",
    path: "/v1/calls/{call_id}/recording",
    summary: "Download a call's recording",
    description:
      "The audio of a recorded call (`record: true`, or a number with `record_inbound`), once call.recording.ready has been sent. The service fetches it from the carrier and streams it: " +
      "no carrier URL or credential is involved. 404 while there is none, after it was deleted, and for another account's call.",
    tags,
    auth: "api_key",
    params: CallIdParams,
    response: { status: 200, description: "The audio", schema: z.string().meta({ format: "binary" }), contentType: "audio/wav" },
    errors: [502],
    handler: async ({ core, auth, params, res }) => {
      const audio = await fetchRecording(core, auth.accountId, params.call_id);
      res.statusCode = 200;
      res.setHeader("Content-Type", audio.contentType);
      if (audio.contentLength !== undefined) res.setHeader("Content-Length", audio.contentLength);
      res.setHeader("Content-Disposition", `attachment; filename="${audio.recordingId}.${audio.contentType === "audio/mpeg" ? "mp3" : "wav"}"`);
      res.setHeader("Cache-Control", "private, no-store");
      res.flushHeaders();
      await pipeline(Readable.from(audio.body), res);
      return undefined;
    },
  }),
  defineRoute({
    operationId: "deleteCallRecording",
    method: "delete",
    path: "/v1/calls/{call_id}/recording",
    summary: "Delete a call's recording",
    description: "Deletes the recording at the carrier too. Afterwards the recording is a 404.",
    tags,
    auth: "api_key",
    params: CallIdParams,
    response: { status: 204, description: "Deleted" },
    errors: [502],
    handler: async ({ core, auth, params }) => {
      await deleteRecording(core, auth.accountId, params.call_id);
      return new Reply(204, undefined);
    },
  }),
];
