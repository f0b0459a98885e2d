import { hole, jsonTemplate } from "../db/json-template.js";
import { eventEnvelope, type EnvelopeFields } from "../events/envelope.js";
import type { EventEnvelope } from "../events/schemas.js";
import type { ConversationLine } from "./conversation-window.js";

/** Everything a call.utterance event says. */
export interface Utterance {
  eventId: string;
  createdAt: string;
  agentId: string;
  accountId: string;
  callId: string;
  turnId: string;
  text: string;
  input: "speech" | "dtmf";
  fromNumber: string;
  toNumber: string;
  isOwnerCall: boolean;
  sessionKey: string;
  conversation: ConversationLine[];
  conversationOmitted: number;
  transcriptUrl: string | null;
  pushContextUrl: string | null;
  pushToken: string;
}

type EveryEvents = "eventId" | "createdAt" | "agentId" | "accountId";

/** call.utterance's own part of its envelope: the payload, then the live-turn fields beside it, in the contract's order. */
export function utteranceContent(u: Omit<Utterance, EveryEvents>): Pick<EnvelopeFields, "payload" | "extras"> {
  return {
    payload: { call_id: u.callId, turn_id: u.turnId, text: u.text, input: u.input, from_number: u.fromNumber, to_number: u.toNumber, is_owner_call: u.isOwnerCall },
    extras: {
      call_id: u.callId,
      turn_id: u.turnId,
      session_key: u.sessionKey,
      conversation: u.conversation,
      conversation_omitted: u.conversationOmitted,
      transcript_url: u.transcriptUrl,
      push_context_url: u.pushContextUrl,
      push_token: u.pushToken,
    },
  };
}

/** The call.utterance envelope. */
export function utteranceEnvelope(u: Utterance): EventEnvelope {
  return eventEnvelope({ eventId: u.eventId, agentId: u.agentId, accountId: u.accountId, type: "call.utterance", createdAt: u.createdAt, ...utteranceContent(u) });
}

// What only agentline_open_turn knows when it writes the event, by the number of the format()
// argument it fills each with (core/db/functions/agentline_open_turn.sql lists them the same way).
const FILLED_BY_THE_FUNCTION = {
  agentId: hole(1),
  accountId: hole(2),
  fromNumber: hole(3),
  toNumber: hole(4),
  isOwnerCall: hole(5),
  sessionKey: hole(6),
  conversation: hole(7),
  conversationOmitted: hole(8),
} satisfies Partial<Record<keyof Utterance, never>>;

/** What the process knows of a call.utterance before its turn's round trip. */
export type UtteranceKnownHere = Omit<Utterance, keyof typeof FILLED_BY_THE_FUNCTION>;

/**
 * The call.utterance envelope as JSON text for agentline_open_turn, which fills the holes left
 * for what only the database knows: the same shape as utteranceEnvelope, since it is made by it.
 */
export function utteranceTemplate(u: UtteranceKnownHere): string {
  return jsonTemplate(utteranceEnvelope({ ...u, ...FILLED_BY_THE_FUNCTION }));
}
