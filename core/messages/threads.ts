import { sql } from "drizzle-orm";
import type { Executor } from "../db/database.js";
import { conversations } from "../db/schema/conversations.js";
import { newId } from "../ids.js";

/**
 * Counts a text, received or sent, in its thread with the other number (one per agent and remote
 * number), starting the thread with its first text. Returns the thread's id.
 */
export async function countInThread(tx: Executor, text: { accountId: string; agentId: string; remoteNumber: string; at: Date }): Promise<string> {
  const [thread] = await tx
    .insert(conversations)
    .values({
      conversationId: newId("conv"),
      accountId: text.accountId,
      agentId: text.agentId,
      remoteNumber: text.remoteNumber,
      messageCount: 1,
      lastMessageAt: text.at,
      createdAt: text.at,
      updatedAt: text.at,
    })
    .onConflictDoUpdate({
      target: [conversations.agentId, conversations.remoteNumber],
      set: { messageCount: sql`${conversations.messageCount} + 1`, lastMessageAt: text.at, updatedAt: text.at },
    })
    .returning({ conversationId: conversations.conversationId });
  return thread!.conversationId;
}
