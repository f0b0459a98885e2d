import type { components } from "./generated/openapi.js";

type Envelope = components["schemas"]["Event"];
type TranscriptLine = { role: "user" | "assistant"; text: string; timestamp: string };

/** Every event type the service sends (from the OpenAPI document). */
export type EventType = Envelope["event_type"];

interface CallOutcome {
  call_id: string;
  direction: "inbound" | "outbound";
  from_number: string;
  to_number: string;
  status: string;
  is_owner_call: boolean;
  answered_at: string | null;
  ended_at: string;
  duration_seconds: number;
  billed_seconds: number;
  charge: string;
  currency: string;
  ended_by: "agent" | "caller" | "carrier" | "service";
  transcript_url: string;
  /** Who answered, with machine_detection (else null). */
  answered_by?: "human" | "machine" | "fax" | "unknown" | null;
  /** The voicemail_message was left on an answering machine. */
  voicemail_left?: boolean;
}

/**
 * The payload of each event type (docs/events.md). Keyed by every EventType, so a type the
 * service adds fails to compile here until its payload is described.
 */
export interface EventPayloads {
  "call.received": {
    call_id: string;
    direction: "inbound";
    from_number: string;
    to_number: string;
    number_id: string;
    is_owner_call: boolean;
    answered_at: string;
  };
  "call.utterance": {
    call_id: string;
    turn_id: string;
    text: string;
    input: "speech" | "dtmf";
    from_number: string;
    to_number: string;
    is_owner_call: boolean;
  };
  "call.completed": CallOutcome;
  "call.failed": CallOutcome;
  "call.busy": CallOutcome;
  "call.no-answer": CallOutcome;
  "call.canceled": CallOutcome;
  "call.owner_task": { call_id: string; from_number: string; instructions: string[]; transcript: TranscriptLine[]; transcript_url: string };
  "sms.received": { message_id: string; conversation_id: string; number_id: string; from_number: string; to_number: string; text: string; received_at: string };
  "sms.status": {
    message_id: string;
    conversation_id: string;
    status: "sent" | "delivered" | "undelivered" | "failed";
    error_code?: string;
    from_number: string;
    to_number: string;
    segments: number;
    updated_at: string;
  };
  "number.renewal_failed": { number_id: string; phone_number: string; amount: string; currency: string; release_at: string };
  "number.released": { number_id: string; phone_number: string; reason: "unpaid" | "lease_expired"; released_at: string };
  "webhook.test": Record<string, unknown>;
  "call.answered_by": {
    call_id: string;
    answered_by: "human" | "machine" | "fax" | "unknown";
    machine_detection: "detect" | "leave_message";
    /** With leave_message and a machine: the message is being left, then the call ends. */
    voicemail_left: boolean;
    status: string;
  };
  "call.recording.ready": {
    call_id: string;
    recording_id: string;
    duration_s: number;
    /** GET it with the API key (null when the service serves no HTTP). */
    recording_url: string | null;
    charge: string;
    currency: string;
  };
  "call.transfer.started": { call_id: string; to_number: string; mode: "cold" | "warm"; whisper: string | null };
  "call.transfer.answered": { call_id: string; to_number: string; mode: "cold" | "warm"; answered_at: string };
  "call.transfer.failed": {
    call_id: string;
    to_number: string;
    mode: "cold" | "warm";
    reason: "busy" | "no-answer" | "failed";
    /** True for a warm transfer: a call.utterance whose text is turn_text follows. */
    returned_to_agent: boolean;
    turn_text: string | null;
  };
}

type Common = Omit<Envelope, "event_type" | "payload" | "call_id" | "turn_id" | "session_key" | "conversation" | "push_context_url" | "push_token">;

/** The live-turn fields a `call.utterance` carries beside its payload. */
export interface TurnFields {
  call_id: string;
  turn_id: string;
  session_key: string;
  conversation: TranscriptLine[];
  push_context_url: string;
  push_token: string;
}

/** An event of one type (or, without a parameter, of any type), with its payload typed. */
export type AgentlineEvent<T extends EventType = EventType> = T extends EventType
  ? Common & { event_type: T; payload: EventPayloads[T] } & (T extends "call.utterance" ? TurnFields : unknown)
  : never;

export type CallUtteranceEvent = AgentlineEvent<"call.utterance">;

/**
 * Remembers the most recent event ids (10,000 by default), oldest forgotten first: enough to drop
 * every redelivery the relay or a webhook retry can make.
 */
export class SeenEvents {
  private readonly ids = new Set<string>();

  constructor(private readonly limit = 10_000) {}

  has(eventId: string): boolean {
    return this.ids.has(eventId);
  }

  /** Records an id; false when it was already there (a duplicate). */
  add(eventId: string): boolean {
    if (this.ids.has(eventId)) return false;
    this.ids.add(eventId);
    if (this.ids.size > this.limit) this.ids.delete(this.ids.values().next().value!);
    return true;
  }
}
