import { z } from "zod";
import { answerTurn } from "../../core/calls/answer-turn.js";
import { hangupCall } from "../../core/calls/hangup-call.js";
import { placeCall } from "../../core/calls/place-call.js";
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
  TransferBody,
} from "../../core/calls/schemas.js";
import { sendDigits } from "../../core/calls/send-digits.js";
import { transferByAccount } from "../../core/calls/transfer.js";
import { listOf } from "../../core/schemas/common.js";
import { FILLER_NOTE } from "../filler.js";
import { defineTool } from "../tool.js";

export const callTools = [
  defineTool({
    name: "place_call",
    title: "Place a phone call",
    description:
      "Calls to_number from the agent's number. Talk time is billed per second from the balance (the first minute must be covered), and the call " +
      "ends if the balance runs out. Then wait_for_event with the call_id: each thing the other party says arrives as call.utterance, to answer " +
      "with push_context; call.completed (or call.busy, call.no-answer, call.failed) ends it.",
    input: [PlaceCallBody],
    output: Call,
    hints: { spendsMoney: true, openWorld: true },
    run: ({ core, accountId }, args) => placeCall(core, accountId, args),
  }),
  defineTool({
    name: "list_calls",
    title: "List calls",
    description: "Lists the account's calls, newest first, optionally for one agent or with one status.",
    input: [ListCallsQuery],
    output: listOf(Call),
    hints: { readOnly: true },
    run: ({ core, accountId }, args) => listCalls(core, accountId, args),
  }),
  defineTool({
    name: "get_call",
    title: "Get a call",
    description: "Reads one call: its status (queued, ringing, in-progress, then how it ended), duration and charge so far.",
    input: [CallIdParams],
    output: Call,
    hints: { readOnly: true },
    run: ({ core, accountId }, args) => getCall(core, accountId, args.call_id),
  }),
  defineTool({
    name: "get_transcript",
    title: "Get a call's transcript",
    description: "What was said on a call, in order: user lines are the other party, assistant lines the agent. Works during the call and after.",
    input: [CallIdParams],
    output: z.object({ call_id: z.string(), transcript: Transcript }),
    hints: { readOnly: true },
    run: async ({ core, accountId }, args) => ({ call_id: args.call_id, transcript: await getTranscript(core, accountId, args.call_id) }),
  }),
  defineTool({
    name: "hang_up_call",
    title: "Hang up a call",
    description:
      "Ends a call now: a connected call becomes completed, a ringing one canceled; an ended call is returned unchanged. " +
      "To say goodbye first, use push_context with end_call true instead.",
    input: [CallIdParams],
    output: Call,
    hints: { destructive: true, idempotent: true, openWorld: true },
    run: ({ core, accountId }, args) => hangupCall(core, accountId, args.call_id),
  }),
  defineTool({
    name: "push_context",
    title: "Say something on a live call",
    description:
      `Answers the other party's turn (turn_id from its call.utterance): text is spoken at once and added to the transcript. ${FILLER_NOTE} ` +
      "If they have spoken again since (turn_stale) or interrupted (turn_cancelled), the answer is refused: discard it and answer the newest call.utterance.",
    input: [CallIdParams, ContextPushQuery, ContextPushBody],
    output: ContextPushResult,
    hints: { openWorld: true },
    run: ({ core, accountId }, args) => answerTurn(core, { accountId }, args.call_id, args.turn_id, args),
  }),
  defineTool({
    name: "transfer_call",
    title: "Transfer a call to a person",
    description:
      "Hands a live call to a person at to_number. A warm transfer nobody answers gives the caller back to the agent, with a new " +
      "call.utterance whose text (like [transfer failed: no-answer]) says why. Events " +
      "call.transfer.started, call.transfer.answered and call.transfer.failed follow it. The bridged leg is billed per minute as an outbound call.",
    input: [CallIdParams, TransferBody],
    output: Call,
    hints: { spendsMoney: true, openWorld: true },
    run: ({ core, accountId }, args) => transferByAccount(core, accountId, args.call_id, args),
  }),
  defineTool({
    name: "say_on_call",
    title: "Say something unprompted on a live call",
    description:
      'Speaks text to the other party now, without a caller turn to answer ("Are you still there?"), and adds it to the transcript. ' +
      "Refused (turn_open) while a call.utterance waits for its answer: answer that with push_context instead. end_call true hangs up after speaking.",
    input: [CallIdParams, SayBody],
    output: SayResult,
    hints: { openWorld: true },
    run: ({ core, accountId }, args) => sayOnCall(core, accountId, args.call_id, { text: args.text, end_call: args.end_call }),
  }),
  defineTool({
    name: "send_digits",
    title: "Press keys on a live call",
    description:
      'Plays keypad tones into a connected call, to get through a phone menu: digits 0-9, * and #, with w for a half-second pause (at most 32), e.g. "1w2#".',
    input: [CallIdParams, DigitsBody],
    output: DigitsResult,
    hints: { openWorld: true },
    run: ({ core, accountId }, args) => sendDigits(core, accountId, args.call_id, args.digits),
  }),
];
