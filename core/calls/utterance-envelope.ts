import { hole, jsonTemplate } from "../db/json-template.js";
import { type EnvelopeFields, eventEnvelope } from "../events/envelope.js";
import type { EventEnvelope } from "../events/schemas.js";
import type { ConversationLine } from "./conversation-window.js";

/** Whose event it is, which, and when. */
export interface UtteranceHead {
  eventId: string;
  createdAt: string;
  agentId: string;
  accountId: string;
}

/** What the process knows of the turn when the caller has spoken. */
export interface UtteranceTurn {
  callId: string;
  turnId: string;
  text: string;
  input: "speech" | "dtmf";
  transcriptUrl: string | null;
  pushContextUrl: string | null;
  pushToken: string;
}

/** What the call's row and its transcript say. */
export interface UtteranceCall {
  fromNumber: string;
  toNumber: string;
  isOwnerCall: boolean;
  sessionKey: string;
  conversation: ConversationLine[];
  conversationOmitted: number;
}

/** call.utterance's own part of its envelope: the payload, then the live-turn fields beside it, in the contract's order. */
export function utteranceContent(turn: UtteranceTurn, call: UtteranceCall): Pick<EnvelopeFields, "payload" | "extras"> {
  return {
    payload: {
      call_id: turn.callId,
      turn_id: turn.turnId,
      text: turn.text,
      input: turn.input,
      from_number: call.fromNumber,
      to_number: call.toNumber,
      is_owner_call: call.isOwnerCall,
    },
    extras: {
      call_id: turn.callId,
      turn_id: turn.turnId,
      session_key: call.sessionKey,
      conversation: call.conversation,
      conversation_omitted: call.conversationOmitted,
      transcript_url: turn.transcriptUrl,
      push_context_url: turn.pushContextUrl,
      push_token: turn.pushToken,
    },
  };
}

/** The call.utterance envelope. */
export function utteranceEnvelope(head: UtteranceHead, turn: UtteranceTurn, call: UtteranceCall): EventEnvelope {
  const { payload, extras } = utteranceContent(turn, call);
  return eventEnvelope({
    eventId: head.eventId,
    agentId: head.agentId,
    accountId: head.accountId,
    type: "call.utterance",
    createdAt: head.createdAt,
    payload,
    extras,
  });
}

// What only agentline_open_turn knows when it writes the event, by the number of the format()
// argument it fills each with (core/db/functions/agentline_open_turn.sql lists them the same way).
const AGENT_ID = hole(1);
const ACCOUNT_ID = hole(2);
const CALL_FILLED_IN: UtteranceCall = {
  fromNumber: hole(3),
  toNumber: hole(4),
  isOwnerCall: hole(5),
  sessionKey: hole(6),
  conversation: hole(7),
  conversationOmitted: hole(8),
};

/**
 * The call.utterance envelope as JSON text for agentline_open_turn, which fills the holes left
 * for what only the database knows (the agent, the account, and the call's part): the same shape
 * as utteranceEnvelope, since it is made by it.
 */
export function utteranceTemplate(eventId: string, createdAt: string, turn: UtteranceTurn): string {
  return jsonTemplate(utteranceEnvelope({ eventId, createdAt, agentId: AGENT_ID, accountId: ACCOUNT_ID }, turn, CALL_FILLED_IN));
}
