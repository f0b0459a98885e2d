import type { EventEnvelope, EventType } from "./schemas.js";

/** The fields an event's envelope is made of; `extras` are its type's own, beside `payload`. */
export interface EnvelopeFields {
  eventId: string;
  agentId: string;
  accountId: string;
  type: EventType;
  createdAt: string;
  payload: Record<string, unknown>;
  extras?: Partial<Omit<EventEnvelope, "event_id" | "agent_id" | "account_id" | "event_type" | "created_at" | "payload">> | undefined;
}

/**
 * An event's envelope: the fields every event has, in this order, then its type's own. The one
 * place the envelope's shape is written: recordEvent stores what it returns, and the live turn's
 * database function gets call.utterance's as a template made by it
 * (core/calls/utterance-envelope.ts).
 */
export function eventEnvelope(fields: EnvelopeFields): EventEnvelope {
  return {
    event_id: fields.eventId,
    agent_id: fields.agentId,
    account_id: fields.accountId,
    event_type: fields.type,
    created_at: fields.createdAt,
    payload: fields.payload,
    ...fields.extras,
  };
}
