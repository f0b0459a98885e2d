import type { Core } from "../context.js";
import { type ConversationLine, conversationWindow } from "./conversation-window.js";

export type { ConversationLine } from "./conversation-window.js";

interface Known {
  /** The id of the call's last transcript line these lines end with. */
  lastEntryId: number;
  /** The call's conversation window (conversation-window.ts): its newest lines... */
  lines: ConversationLine[];
  /** ...and how many lines before them it leaves out. */
  omitted: number;
}

// Live calls this process keeps the conversation of; the oldest is forgotten beyond this.
const MAX_CALLS = 10_000;

/**
 * The conversations of the live calls this process serves, kept line by line as turns are
 * written, so a turn never re-reads the transcript; only the window a turn carries is kept, so a
 * long call costs no more memory than a short one. An entry is trusted only while the database's
 * last transcript line of the call is the one it ends with (checked inside the turn's own
 * statement): a line written by another process, or a filler, makes the turn read it afresh.
 */
export class ConversationCache {
  private readonly calls = new Map<string, Known>();

  get(callId: string): Known | undefined {
    return this.calls.get(callId);
  }

  /** The conversation of callId now ends with line `entryId`; `omitted` lines came before `lines`. */
  set(callId: string, entryId: number, lines: ConversationLine[], omitted = 0): void {
    this.calls.delete(callId);
    this.calls.set(callId, { lastEntryId: entryId, ...conversationWindow(lines, omitted) });
    if (this.calls.size > MAX_CALLS) this.calls.delete(this.calls.keys().next().value!);
  }

  /** Line `entryId` followed `previousEntryId`: appended if the entry is that far, else the entry is dropped. */
  append(callId: string, previousEntryId: number | null, entryId: number, line: ConversationLine): void {
    const known = this.calls.get(callId);
    if (known && known.lastEntryId === previousEntryId) {
      known.lines.push(line);
      ({ lines: known.lines, omitted: known.omitted } = conversationWindow(known.lines, known.omitted));
      known.lastEntryId = entryId;
    } else this.calls.delete(callId);
  }

  forget(callId: string): void {
    this.calls.delete(callId);
  }
}

const caches = new WeakMap<Core, ConversationCache>();

/** The process's conversation cache (one per core). */
export function conversations(core: Core): ConversationCache {
  let cache = caches.get(core);
  if (!cache) caches.set(core, (cache = new ConversationCache()));
  return cache;
}
