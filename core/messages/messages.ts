import { and, desc, eq, inArray } from "drizzle-orm";
import { loadAgent } from "../agents/agents.js";
import type { Core } from "../context.js";
import { conversations } from "../db/schema/conversations.js";
import { messages } from "../db/schema/messages.js";
import { notFound } from "../errors.js";
import { type Pagination, toPage } from "../schemas/common.js";
import type { Conversation, Message } from "./schemas.js";

export function presentMessage(row: typeof messages.$inferSelect): Message {
  return {
    message_id: row.messageId,
    agent_id: row.agentId,
    conversation_id: row.conversationId,
    number_id: row.numberId,
    direction: row.direction,
    from_number: row.fromNumber,
    to_number: row.toNumber,
    text: row.text,
    created_at: row.createdAt.toISOString(),
    status: row.direction === "inbound" ? "received" : (row.status ?? "queued"),
    segments: row.segments,
    error_code: row.errorCode,
  };
}

/** Texts received and sent, newest first; filtered by agent and thread (both must be the account's). */
export async function listMessages(core: Core, accountId: string, query: Pagination & { agent_id?: string | undefined; conversation_id?: string | undefined }) {
  if (query.agent_id) await loadAgent(core.db, accountId, query.agent_id);
  if (query.conversation_id) {
    const [thread] = await core.db
      .select({ id: conversations.conversationId })
      .from(conversations)
      .where(and(eq(conversations.conversationId, query.conversation_id), eq(conversations.accountId, accountId)));
    if (!thread) throw notFound("conversation", query.conversation_id);
  }
  const rows = await core.db
    .select()
    .from(messages)
    .where(
      and(
        eq(messages.accountId, accountId),
        query.agent_id ? eq(messages.agentId, query.agent_id) : undefined,
        query.conversation_id ? eq(messages.conversationId, query.conversation_id) : undefined,
      ),
    )
    .orderBy(desc(messages.messageId))
    .limit(query.limit + 1)
    .offset(query.offset);
  return toPage(rows, query, presentMessage);
}

/** Threads, most recently active first, each with its latest message. */
export async function listConversations(core: Core, accountId: string, query: Pagination & { agent_id?: string | undefined }) {
  if (query.agent_id) await loadAgent(core.db, accountId, query.agent_id);
  const rows = await core.db
    .select()
    .from(conversations)
    .where(and(eq(conversations.accountId, accountId), query.agent_id ? eq(conversations.agentId, query.agent_id) : undefined))
    .orderBy(desc(conversations.lastMessageAt), desc(conversations.conversationId))
    .limit(query.limit + 1)
    .offset(query.offset);
  const page = rows.slice(0, query.limit);
  const latest = new Map<string, typeof messages.$inferSelect>();
  if (page.length > 0) {
    // One row per thread: its newest message.
    const recent = await core.db
      .selectDistinctOn([messages.conversationId])
      .from(messages)
      .where(
        inArray(
          messages.conversationId,
          page.map((r) => r.conversationId),
        ),
      )
      .orderBy(messages.conversationId, desc(messages.messageId));
    for (const m of recent) latest.set(m.conversationId, m);
  }
  return toPage(rows, query, (row): Conversation => {
    const last = latest.get(row.conversationId);
    return {
      conversation_id: row.conversationId,
      agent_id: row.agentId,
      remote_number: row.remoteNumber,
      message_count: row.messageCount,
      last_message_at: row.lastMessageAt.toISOString(),
      last_message: last ? { message_id: last.messageId, text: last.text, created_at: last.createdAt.toISOString() } : null,
      created_at: row.createdAt.toISOString(),
    };
  });
}
