import { describe, expect, it } from "vitest";
import { CONVERSATION_MAX_BYTES, CONVERSATION_MAX_LINES, type ConversationLine, conversationWindow } from "../../core/calls/conversation-window.js";

// The window a live turn carries (core/calls/conversation-window.ts), at its limits: the newest
// lines within a line count and a byte budget (UTF-8), the newest always. How a long call carries
// it end to end is in test/hostile/conversation-size.test.ts.

const line = (text: string, i = 0): ConversationLine => ({
  role: i % 2 ? "assistant" : "user",
  text,
  timestamp: new Date(Date.UTC(2030, 0, 1, 0, 0, i)).toISOString(),
});
const lines = (n: number, text = "hi") => Array.from({ length: n }, (_, i) => line(`${text} ${i}`, i));

describe("a turn's conversation window", () => {
  it("carries every line of a short conversation, adding nothing to what was already left out", () => {
    const all = lines(3);
    expect(conversationWindow(all)).toEqual({ lines: all, omitted: 0 });
    expect(conversationWindow(all, 7)).toEqual({ lines: all, omitted: 7 });
    expect(conversationWindow([])).toEqual({ lines: [], omitted: 0 });
  });

  it("carries the newest lines up to the line limit, exactly, and counts the rest", () => {
    const all = lines(CONVERSATION_MAX_LINES);
    expect(conversationWindow(all)).toEqual({ lines: all, omitted: 0 });
    const more = lines(CONVERSATION_MAX_LINES + 5);
    expect(conversationWindow(more, 2)).toEqual({ lines: more.slice(5), omitted: 7 });
  });

  it("carries lines up to the byte budget exactly, counted in UTF-8 bytes, not characters", () => {
    // Four lines of a quarter of the budget each fit exactly; a fifth, older, of one byte does not.
    const quarter = CONVERSATION_MAX_BYTES / 4;
    const full = [line("x"), ...Array.from({ length: 4 }, (_, i) => line("é".repeat(quarter / 2), i + 1))];
    expect(conversationWindow(full)).toEqual({ lines: full.slice(1), omitted: 1 });
    // One byte under the budget, the older line of one byte fits too.
    const under = [line("x"), line("a".repeat(CONVERSATION_MAX_BYTES - 1), 1)];
    expect(conversationWindow(under)).toEqual({ lines: under, omitted: 0 });
    const over = [line("xy"), line("a".repeat(CONVERSATION_MAX_BYTES - 1), 1)];
    expect(conversationWindow(over, 3)).toEqual({ lines: over.slice(1), omitted: 4 });
  });

  it("carries the newest line whatever its size, and nothing older with it", () => {
    const huge = line("a".repeat(CONVERSATION_MAX_BYTES * 2), 1);
    expect(conversationWindow([line("older"), huge])).toEqual({ lines: [huge], omitted: 1 });
    expect(conversationWindow([huge])).toEqual({ lines: [huge], omitted: 0 });
  });
});
