import { desc, eq, sql } from "drizzle-orm";
import type { Executor } from "../db/database.js";
import { transcriptEntries } from "../db/schema/transcript-entries.js";

/** One line of a call's conversation, as a call.utterance event carries it. */
export interface ConversationLine {
  role: "user" | "assistant";
  text: string;
  timestamp: string;
}

/**
 * How much of a call's conversation a live turn carries: its newest lines, at most this many,
 * with at most this many bytes of text (UTF-8) in all, though the newest line is carried whatever
 * its size. The rest is counted in `conversation_omitted` and read from the transcript. The turn
 * function (core/db/functions/agentline_open_turn.sql) is given these numbers. Why these:
 * docs/decisions/0060-conversation-window.md.
 */
export const CONVERSATION_MAX_LINES = 100;
export const CONVERSATION_MAX_BYTES = 16 * 1024;

/** A call's conversation as a turn carries it: the newest lines, oldest first, and how many earlier ones were left out. */
export interface ConversationWindow {
  lines: ConversationLine[];
  omitted: number;
}

/**
 * The window of lines (oldest first) that a turn carries: the longest run of newest lines within
 * CONVERSATION_MAX_LINES and CONVERSATION_MAX_BYTES, the newest always. `omitted` counts the lines
 * before `lines` that were already left out; the result adds those cut here.
 */
export function conversationWindow(lines: ConversationLine[], omitted = 0): ConversationWindow {
  let bytes = 0;
  let first = lines.length;
  while (first > 0 && lines.length - first < CONVERSATION_MAX_LINES) {
    const size = Buffer.byteLength(lines[first - 1]!.text, "utf8");
    if (first < lines.length && bytes + size > CONVERSATION_MAX_BYTES) break;
    bytes += size;
    first--;
  }
  return first === 0 ? { lines, omitted } : { lines: lines.slice(first), omitted: omitted + first };
}

/**
 * The call's conversation window, read from the database: only its newest lines (by the
 * transcript's (call_id, entry_id) index), and the number of the others, counted, never read.
 */
export async function readConversationWindow(db: Executor, callId: string): Promise<ConversationWindow> {
  const newest = await readLastLines(db, callId, CONVERSATION_MAX_LINES);
  const window = conversationWindow(newest);
  if (newest.length < CONVERSATION_MAX_LINES) return window;
  const [counted] = await db.select({ lines: sql<number>`count(*)::int` }).from(transcriptEntries).where(eq(transcriptEntries.callId, callId));
  return { lines: window.lines, omitted: counted!.lines - window.lines.length };
}

/** The call's last `count` transcript lines, oldest first. */
export async function readLastLines(db: Executor, callId: string, count: number): Promise<ConversationLine[]> {
  const rows = await db
    .select({ role: transcriptEntries.role, text: transcriptEntries.text, createdAt: transcriptEntries.createdAt })
    .from(transcriptEntries)
    .where(eq(transcriptEntries.callId, callId))
    .orderBy(desc(transcriptEntries.entryId))
    .limit(count);
  return rows.reverse().map((r) => ({ role: r.role, text: r.text, timestamp: r.createdAt.toISOString() }));
}
