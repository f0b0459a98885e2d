import { z } from "zod";
import { Money } from "../billing/money.js";
import { Pagination, PhoneNumber, Timestamp } from "../schemas/common.js";

export const CALL_STATUSES = ["queued", "ringing", "in-progress", "completed", "busy", "no-answer", "failed", "canceled"] as const;
export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(["completed", "busy", "no-answer", "failed", "canceled"]);

/** Who answered a call, as machine detection tells (call.answered_by). */
export const ANSWERED_BY = ["human", "machine", "fax", "unknown"] as const;
export type AnsweredBy = (typeof ANSWERED_BY)[number];

export const MACHINE_DETECTION = ["off", "detect", "leave_message"] as const;

/** A voicemail message is spoken onto a machine, so it is kept to what a message is. */
export const MAX_VOICEMAIL_TEXT = 1000;

export const Call = z
  .object({
    call_id: z.string().meta({ example: "call_01jdz3k7q8m9x2v4b6n8p0r2t4" }),
    agent_id: z.string(),
    number_id: z.string().nullable().meta({ description: "The agent's number the call used" }),
    direction: z.enum(["inbound", "outbound"]),
    from_number: PhoneNumber,
    to_number: PhoneNumber,
    status: z.enum(CALL_STATUSES).meta({ description: "Twilio's vocabulary" }),
    is_owner_call: z.boolean().meta({ description: "True when the agent's owner_number called" }),
    voice_id: z.string().meta({ description: "The voice preset in effect for this call" }),
    ended_by: z.enum(["agent", "caller", "carrier", "service"]).nullable(),
    created_at: Timestamp,
    answered_at: Timestamp.nullable(),
    ended_at: Timestamp.nullable(),
    duration_seconds: z.number().int().nullable().meta({ description: "Seconds from answer to end; null while live" }),
    billed_seconds: z.number().int().nullable().meta({ description: "Seconds billed, once ended: the talk time, unless the balance ran out" }),
    charge: Money.meta({ description: "Charged so far: talk time is prepaid a block ahead and the unused rest refunded at the end" }),
    currency: z.literal("USD"),
    answered_by: z.enum(ANSWERED_BY).nullable().meta({
      description: "Outbound with machine_detection: who answered (human, machine, fax, unknown); null until known, and without detection",
    }),
    voicemail_left: z.boolean().meta({ description: "The voicemail_message was left on an answering machine (then the call ended)" }),
    record: z.boolean().meta({ description: "The call is recorded (after the recording notice); GET /v1/calls/{call_id}/recording once ready" }),
    transferred_to: PhoneNumber.nullable().meta({ description: "The person the call was handed to (POST .../transfer), once they answered; null otherwise" }),
    transfer_status: z
      .enum(["dialing", "bridged", "failed"])
      .nullable()
      .meta({ description: "The call's last transfer: dialing, bridged (the caller is with the person) or failed; null if never transferred" }),
  })
  .meta({ id: "Call" });
export type Call = z.infer<typeof Call>;

/** A greeting is one short line spoken before anyone else talks: a sentence or two, not a speech. */
export const MAX_GREETING = 500;

/** What the agent says first, when a call is answered: recorded in the transcript as `assistant`, it opens no turn. */
export const Greeting = z
  .string()
  .trim()
  .min(1)
  .max(MAX_GREETING)
  .meta({ description: "Spoken as soon as the call is answered, before the other party says anything" });

export const PlaceCallBody = z
  .strictObject({
    agent_id: z.string().min(1).meta({ description: "The agent that calls (agt_...); it needs a number (buy_number)" }),
    to_number: PhoneNumber.meta({
      description:
        "E.164. On the sandbox carrier a number ending 0001 is busy, 0002 does not answer, 0003 fails, 0004 is a voicemail box (an answering machine), 0005 rings until hung up.",
    }),
    machine_detection: z.enum(MACHINE_DETECTION).default("off").meta({
      description:
        "detect: call.answered_by says who answered (human, machine, fax, unknown) before the first turn. leave_message: also, when a machine answers, voicemail_message is spoken after the beep and the call ends",
    }),
    voicemail_message: z
      .string()
      .trim()
      .min(1)
      .max(MAX_VOICEMAIL_TEXT)
      .optional()
      .meta({ description: "Required with machine_detection leave_message: what is left on the answering machine" }),
    record: z.boolean().default(false).meta({
      description: "Record the call: the other party first hears the recording notice, and nothing is recorded before it. call.recording.ready follows the end",
    }),
    from_number: PhoneNumber.optional().meta({
      description: "One of the agent's own active numbers to call from; by default its oldest. Another agent's or an unknown number is refused.",
    }),
    greeting: Greeting.optional(),
  })
  .meta({ id: "PlaceCallRequest" });

export const RecordingResult = z
  .object({
    recording_id: z.string().meta({ example: "rec_01jdz3k7q8m9x2v4b6n8p0r2t4" }),
    call_id: z.string(),
    duration_s: z.number().int(),
  })
  .meta({ id: "Recording" });

export const ListCallsQuery = Pagination.extend({
  agent_id: z.string().optional().meta({ description: "Only this agent's calls" }),
  status: z.enum(CALL_STATUSES).optional().meta({ description: "Only calls with this status" }),
});

export const CallIdParams = z.object({ call_id: z.string().meta({ description: "The call's id (call_...)" }) });

export const TranscriptEntry = z.object({ role: z.enum(["user", "assistant"]), text: z.string(), timestamp: Timestamp }).meta({ id: "TranscriptEntry" });

export const Transcript = z.array(TranscriptEntry).meta({ id: "Transcript", description: "The call's lines in order" });

/** Context pushes are spoken, so they are kept to what fits a turn of speech. */
export const MAX_SPOKEN_TEXT = 4000;

export const ContextPushBody = z
  .strictObject({
    text: z
      .string()
      .trim()
      .min(1)
      .max(MAX_SPOKEN_TEXT)
      .optional()
      .meta({ description: "What the agent says to the caller; required unless `transfer_to` answers the turn" }),
    final: z.boolean().default(true).meta({ description: "false: an interim line; the turn stays open for the final answer" }),
    end_call: z.boolean().default(false).meta({ description: "Hang up after speaking" }),
    transfer_to: PhoneNumber.optional().meta({
      description: "Answer the turn by handing the call to this person (E.164), after speaking `text` if given: as POST /v1/calls/{call_id}/transfer",
    }),
    transfer_mode: z.enum(["cold", "warm"]).optional().meta({ description: "With transfer_to: cold (default) or warm" }),
    whisper: z
      .string()
      .trim()
      .min(1)
      .max(MAX_SPOKEN_TEXT)
      .optional()
      .meta({ description: "With transfer_to and transfer_mode warm: what the person hears first" }),
  })
  .superRefine((body, ctx) => {
    if (body.text === undefined && body.transfer_to === undefined)
      ctx.addIssue({ code: "custom", path: ["text"], message: "text is required (or transfer_to)" });
    if (body.transfer_to === undefined && (body.transfer_mode !== undefined || body.whisper !== undefined)) {
      ctx.addIssue({ code: "custom", path: ["transfer_to"], message: "transfer_mode and whisper need transfer_to" });
    }
    if (body.transfer_to !== undefined && (body.end_call || !body.final)) {
      ctx.addIssue({ code: "custom", path: ["transfer_to"], message: "a transfer answers the turn: it takes neither end_call nor final: false" });
    }
  })
  .meta({ id: "ContextPush" });

export const ContextPushQuery = z.strictObject({ turn_id: z.string().min(1).meta({ description: "The turn_id of the call.utterance event, exactly" }) });

export const ContextPushResult = z
  .object({
    call_id: z.string(),
    turn_id: z.string(),
    turn_status: z.enum(["open", "answered"]).meta({ description: "open after an interim line, answered after the final one" }),
    spoken_at: Timestamp,
    call_ending: z.boolean(),
    transfer: z
      .object({ to_number: PhoneNumber, mode: z.enum(["cold", "warm"]), status: z.enum(["dialing", "bridged", "failed"]) })
      .optional()
      .meta({ description: "When the answer was a transfer: the transfer as it stands (call.transfer.answered or .failed follow)" }),
  })
  .meta({ id: "ContextPushResult" });

export const SayBody = z
  .strictObject({
    text: z.string().trim().min(1).max(MAX_SPOKEN_TEXT).meta({ description: "What the agent says, unprompted" }),
    end_call: z.boolean().default(false).meta({ description: "Hang up after speaking" }),
  })
  .meta({ id: "SayOnCall" });

export const SayResult = z.object({ call_id: z.string(), spoken_at: Timestamp, call_ending: z.boolean() }).meta({ id: "SayOnCallResult" });

/** Keypad tones: digits, `*`, `#`, and `w` for a half-second pause. */
export const DIGITS_PATTERN = /^[0-9*#w]{1,32}$/;

export const DigitsBody = z
  .strictObject({
    digits: z
      .string()
      .regex(DIGITS_PATTERN, "must be 1 to 32 of 0-9, *, # and w (a half-second pause)")
      .meta({ description: "Keys to press, in order: 0-9, * and #, with w for a half-second pause (at most 32)", example: "1w2#" }),
  })
  .meta({ id: "SendDigits" });

export const DigitsResult = z.object({ call_id: z.string(), digits: z.string(), sent_at: Timestamp }).meta({ id: "SendDigitsResult" });

export const TransferBody = z
  .strictObject({
    to_number: PhoneNumber.meta({
      description: "The person to hand the call to, E.164. On the sandbox carrier a number ending 0001 is busy, 0002 does not answer, 0003 fails.",
    }),
    mode: z.enum(["cold", "warm"]).default("cold").meta({
      description: "cold: the agent leaves at once; warm: `whisper` is spoken to the person first, and if nobody answers the caller comes back to the agent",
    }),
    whisper: z
      .string()
      .trim()
      .min(1)
      .max(MAX_SPOKEN_TEXT)
      .optional()
      .meta({ description: "Warm transfers: what the person hears before the caller is bridged (who is calling and why)" }),
  })
  .meta({ id: "TransferRequest" });
export type TransferBody = z.infer<typeof TransferBody>;
