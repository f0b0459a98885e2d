import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CONVERSATION_MAX_BYTES,
  CONVERSATION_MAX_LINES,
  type ConversationLine,
  conversationWindow,
  readConversationWindow,
} from "../../core/calls/conversation-window.js";
import { transcriptEntries } from "../../core/db/schema/transcript-entries.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";

// The window a live turn carries (core/calls/conversation-window.ts), at its limits: the newest
// lines within a line count and a byte budget (UTF-8), the newest always; and read from the
// database, counting the lines left out. How a long call carries it end to end is in
// test/hostile/conversation-size.test.ts.

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

describe("a call's window read from the database", () => {
  let service: TestService;
  let api: Api;
  beforeAll(async () => {
    service = await startTestService();
    api = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
  });
  afterAll(() => service?.stop());

  /** A connected call (no greeting) whose transcript holds exactly these lines. */
  async function callWith(texts: string[]) {
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    const at = new Date();
    if (texts.length) await service.core.db.insert(transcriptEntries).values(texts.map((text) => ({ callId, role: "user" as const, text, createdAt: at })));
    return callId;
  }
  const texts = (n: number, text = "hi") => Array.from({ length: n }, (_, i) => `${text} ${i}`);
  const textsOf = (window: { lines: ConversationLine[] }) => window.lines.map((l) => l.text);

  it("of a short call: every line, none left out; of none: empty", async () => {
    expect(await readConversationWindow(service.core.db, await callWith([]))).toEqual({ lines: [], omitted: 0 });
    expect(textsOf(await readConversationWindow(service.core.db, await callWith(texts(3))))).toEqual(texts(3));
  });

  it("of a call at the line limit and past it: the newest lines, the others counted, another call's not", async () => {
    const exactly = await readConversationWindow(service.core.db, await callWith(texts(CONVERSATION_MAX_LINES)));
    expect(exactly.omitted).toBe(0);
    expect(textsOf(exactly)).toEqual(texts(CONVERSATION_MAX_LINES));
    const past = await readConversationWindow(service.core.db, await callWith(texts(CONVERSATION_MAX_LINES + 30)));
    expect(past.omitted).toBe(30);
    expect(textsOf(past)).toEqual(texts(CONVERSATION_MAX_LINES + 30).slice(30));
  });

  it("of a long call whose newest lines fill the byte budget: the others counted, not read", async () => {
    const all = [...texts(CONVERSATION_MAX_LINES + 10), "a".repeat(CONVERSATION_MAX_BYTES - 4), "last"];
    const window = await readConversationWindow(service.core.db, await callWith(all));
    expect(textsOf(window)).toEqual(all.slice(-2));
    expect(window.omitted).toBe(all.length - 2);
  });
});
