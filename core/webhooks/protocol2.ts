import { and, desc, eq, ne, or } from "drizzle-orm";
import type { CallRow } from "../calls/call-records.js";
import { type ConversationWindow, readLastLines } from "../calls/conversation-window.js";
import type { Executor } from "../db/database.js";
import { calls } from "../db/schema/calls.js";
import { messages } from "../db/schema/messages.js";
import type { SessionMessage } from "../events/routing.js";
import type { EventEnvelope } from "../events/schemas.js";

/**
 * The typed POSTs of protocol `service-relay/2` (docs/protocol-2.md). Every body carries `id`
 * (the dedup key, also the `webhook-id` header), `type`, `created_at`, `agent_id`, `account_id`
 * and `call_id`; a receiver answers 202 and replies only through the context endpoint.
 */
function base(type: string, id: string, call: { agentId: string; accountId: string; callId: string }, createdAt: string) {
  return { id, type, created_at: createdAt, agent_id: call.agentId, account_id: call.accountId, call_id: call.callId };
}

const remoteNumber = (call: CallRow) => (call.direction === "inbound" ? call.fromNumber : call.toNumber);

/** Who is calling and what happened with that number before: for runtimes that declared `briefing`. */
export async function briefingFor(tx: Executor, call: CallRow) {
  const remote = remoteNumber(call);
  const pastCalls = await tx
    .select()
    .from(calls)
    .where(
      and(
        eq(calls.agentId, call.agentId),
        ne(calls.callId, call.callId),
        or(and(eq(calls.direction, "inbound"), eq(calls.fromNumber, remote)), and(eq(calls.direction, "outbound"), eq(calls.toNumber, remote))),
      ),
    )
    .orderBy(desc(calls.callId))
    .limit(5);
  const recentTexts = await tx
    .select({ text: messages.text, createdAt: messages.createdAt })
    .from(messages)
    .where(and(eq(messages.agentId, call.agentId), eq(messages.fromNumber, remote)))
    .orderBy(desc(messages.messageId))
    .limit(5);
  return {
    caller: { number: remote, is_owner: call.isOwnerCall },
    recent_calls: await Promise.all(
      pastCalls.map(async (c) => ({
        call_id: c.callId,
        direction: c.direction,
        status: c.status,
        answered_at: c.answeredAt?.toISOString() ?? null,
        duration_seconds: c.durationSeconds,
        last_lines: await readLastLines(tx, c.callId, 6),
      })),
    ),
    recent_texts: recentTexts.map((m) => ({ text: m.text, received_at: m.createdAt.toISOString() })),
  };
}

export async function sessionStart(tx: Executor, id: string, call: CallRow, withBriefing: boolean, sessionKey: string): Promise<SessionMessage> {
  return {
    type: "call.session.start",
    body: {
      ...base("call.session.start", id, call, (call.answeredAt ?? new Date()).toISOString()),
      session_key: sessionKey,
      direction: call.direction,
      from_number: call.fromNumber,
      to_number: call.toNumber,
      is_owner_call: call.isOwnerCall,
      voice_id: call.voiceId,
      answered_at: call.answeredAt?.toISOString() ?? null,
      ...(withBriefing ? { briefing: await briefingFor(tx, call) } : {}),
    },
  };
}

/** A caller turn, as a task: answer it at push_context_url with push_token. */
export function taskOpen(envelope: EventEnvelope): SessionMessage {
  const payload = envelope.payload as { text: string; input: string };
  return {
    type: "call.task.open",
    body: {
      ...base(
        "call.task.open",
        envelope.event_id,
        { agentId: envelope.agent_id, accountId: envelope.account_id, callId: envelope.call_id! },
        envelope.created_at,
      ),
      session_key: envelope.session_key,
      task_id: envelope.turn_id,
      text: payload.text,
      input: payload.input,
      conversation: envelope.conversation,
      conversation_omitted: envelope.conversation_omitted,
      transcript_url: envelope.transcript_url,
      push_context_url: envelope.push_context_url,
      push_token: envelope.push_token,
    },
  };
}

/** The caller said more before the task was answered: the same task, with the new words. */
export function taskAmend(
  id: string,
  call: CallRow,
  task: {
    turnId: string;
    text: string;
    fullText: string;
    conversation: ConversationWindow;
    transcriptUrl: string | null;
    pushContextUrl: string | null;
    pushToken: string;
  },
  createdAt: Date,
): SessionMessage {
  return {
    type: "call.task.amend",
    body: {
      ...base("call.task.amend", id, call, createdAt.toISOString()),
      task_id: task.turnId,
      text: task.text,
      full_text: task.fullText,
      conversation: task.conversation.lines,
      conversation_omitted: task.conversation.omitted,
      transcript_url: task.transcriptUrl,
      push_context_url: task.pushContextUrl,
      push_token: task.pushToken,
    },
  };
}

export function taskCancel(id: string, call: CallRow, turnId: string, createdAt: Date): SessionMessage {
  return { type: "call.task.cancel", body: { ...base("call.task.cancel", id, call, createdAt.toISOString()), task_id: turnId, reason: "interrupted" } };
}

/** The end of a connected call's session, from its call.completed (or other ending) event. */
export function sessionEnd(envelope: EventEnvelope): SessionMessage {
  const p = envelope.payload as Record<string, unknown>;
  return {
    type: "call.session.end",
    body: {
      ...base(
        "call.session.end",
        envelope.event_id,
        { agentId: envelope.agent_id, accountId: envelope.account_id, callId: String(p.call_id) },
        envelope.created_at,
      ),
      status: p.status,
      ended_by: p.ended_by,
      answered_at: p.answered_at,
      ended_at: p.ended_at,
      duration_seconds: p.duration_seconds,
      transcript_url: p.transcript_url,
    },
  };
}
