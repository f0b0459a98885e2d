import { and, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import type { Core } from "../core/context.js";
import { calls } from "../core/db/schema/calls.js";
import { EventEnvelope } from "../core/events/schemas.js";

/**
 * An event as MCP shows it. The relay and webhooks get the spec's envelope; a model reading the
 * mailbox through tools needs less, and pays for every token:
 * - a call.utterance drops `push_token` and `push_context_url` (push_context answers it, with the
 *   connection's own credential), `transcript_url` (get_transcript), `session_key`, and the
 *   conversation so far, which the model already holds: carried on every turn it made a long
 *   call cost tokens quadratic in its length;
 * - its `from_number`/`to_number` are the call's (an outbound call's from_number is the agent's
 *   own), read as the speaker's they misled: MCP names the sides instead.
 */
export const McpEvent = EventEnvelope.omit({
  session_key: true,
  conversation: true,
  conversation_omitted: true,
  transcript_url: true,
  push_context_url: true,
  push_token: true,
}).extend({
  payload: z.record(z.string(), z.unknown()).meta({
    description:
      "What happened. call.utterance: text (what the other party just said), input (speech or keypad dtmf), other_party_number (who said it), agent_number (the agent's own number), is_owner_call",
  }),
});
export type McpEvent = z.infer<typeof McpEvent>;

/** Events as MCP shows them; the calls of the utterances among them are read in one query, for who is on which side. */
export async function mcpEvents(core: Core, accountId: string, envelopes: readonly EventEnvelope[]): Promise<McpEvent[]> {
  const callIds = [...new Set(envelopes.filter((e) => e.event_type === "call.utterance" && e.call_id).map((e) => e.call_id as string))];
  const directions = new Map<string, "inbound" | "outbound">();
  if (callIds.length > 0) {
    const rows = await core.db
      .select({ callId: calls.callId, direction: calls.direction })
      .from(calls)
      .where(and(eq(calls.accountId, accountId), inArray(calls.callId, callIds)));
    for (const row of rows) directions.set(row.callId, row.direction);
  }
  return envelopes.map((envelope) => mcpEvent(envelope, directions));
}

function mcpEvent(envelope: EventEnvelope, directions: ReadonlyMap<string, "inbound" | "outbound">): McpEvent {
  const { session_key, conversation, conversation_omitted, transcript_url, push_context_url, push_token, ...kept } = envelope;
  if (envelope.event_type !== "call.utterance") return kept;
  // call_id and turn_id are beside the payload already; from/to become the sides of the call.
  const { call_id, turn_id, from_number, to_number, ...said } = envelope.payload;
  const inbound = directions.get(String(envelope.call_id)) !== "outbound";
  return {
    ...kept,
    payload: { ...said, other_party_number: inbound ? from_number : to_number, agent_number: inbound ? to_number : from_number },
  };
}
