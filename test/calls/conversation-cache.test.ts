import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConversationCache, type ConversationLine, conversations } from "../../core/calls/conversation-cache.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { RelayClient } from "../../harness/relay-client.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall, drainEvents } from "../support/telephony.js";

// The conversation a live turn carries is kept in memory line by line (core/calls/conversation-cache.ts).
// A copy is trusted only while it ends with the call's last transcript line; a wrong copy would
// send the agent a conversation with a line missing, so the copy must be dropped, never patched.

const line = (role: ConversationLine["role"], text: string): ConversationLine => ({ role, text, timestamp: "2025-01-01T00:00:00.000Z" });

describe("the conversation cache", () => {
  it("appends a line only to the line it followed, and drops its copy otherwise", () => {
    const cache = new ConversationCache();
    cache.set("call_a", 10, [line("user", "Hello?")]);
    expect(cache.get("call_a")).toEqual({ lastEntryId: 10, lines: [line("user", "Hello?")], omitted: 0 });
    cache.append("call_a", 10, 11, line("assistant", "Hi there."));
    expect(cache.get("call_a")).toEqual({ lastEntryId: 11, lines: [line("user", "Hello?"), line("assistant", "Hi there.")], omitted: 0 });
    // Line 13 followed line 12, which this copy never saw (another process wrote it).
    cache.append("call_a", 12, 13, line("user", "Are you there?"));
    expect(cache.get("call_a")).toBeUndefined();
    // A call it does not know stays unknown: there is nothing to append to.
    cache.append("call_b", null, 1, line("user", "Hello?"));
    expect(cache.get("call_b")).toBeUndefined();
  });

  it("forgets a call on request", () => {
    const cache = new ConversationCache();
    cache.set("call_a", 1, [line("user", "Hello?")]);
    cache.forget("call_a");
    expect(cache.get("call_a")).toBeUndefined();
  });

  it("keeps at most 10 000 calls, forgetting the one set longest ago", () => {
    const cache = new ConversationCache();
    for (let i = 0; i < 10_000; i++) cache.set(`call_${i}`, i, []);
    expect(cache.get("call_0")).toBeDefined();
    // Set again, call_0 is the newest; the next call beyond the bound pushes out call_1.
    cache.set("call_0", 10_000, []);
    cache.set("call_10000", 10_001, []);
    expect(cache.get("call_1")).toBeUndefined();
    expect(cache.get("call_0")).toEqual({ lastEntryId: 10_000, lines: [], omitted: 0 });
    expect(cache.get("call_2")).toBeDefined();
    expect(cache.get("call_10000")).toBeDefined();
  });
});

describe("the conversation of a live call", () => {
  let service: TestService;
  let account: TestAccount;
  let api: Api;

  beforeAll(async () => {
    service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000" } });
    account = await createAccount(service.core);
    api = new Api(service.baseUrl, account.apiKey);
  });
  afterAll(() => service?.stop());

  it("is kept by the process's one cache, and read afresh when an answer followed a line written elsewhere", async () => {
    const { agentId } = await agentWithNumber(api);
    const relay = await RelayClient.connect(service.baseUrl, { agent_id: agentId }, account.apiKey);
    const callId = await answeredCall(api, agentId);
    const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
    const first = await phone.say("question 0");
    relay.ack((await relay.waitForEvents(1))[0]!.event_id);
    // The turn left its conversation in the process's cache, which every later turn consults.
    expect(
      conversations(service.core)
        .get(callId)
        ?.lines.map((l) => l.text),
    ).toEqual(["question 0"]);

    // Another process speaks a line into the call between the turn and its answer.
    await service.core.db.execute(sql`insert into transcript_entries (call_id, role, text) values (${callId}, 'assistant', 'written elsewhere')`);
    expect((await api.post(`/v1/calls/${callId}/context`, { text: "answer 0" }, { query: { turn_id: first } })).status).toBe(200);
    await phone.say("question 1");
    const event = (await relay.waitForEvents(2)).at(-1)!;
    expect(event.conversation.map((l: { text: string }) => l.text)).toEqual(["question 0", "written elsewhere", "answer 0", "question 1"]);
    expect(event.conversation).toEqual((await api.get(`/v1/calls/${callId}/transcript`)).body);
    phone.close();
    await relay.close();
  });

  it("is forgotten when the turn's one round trip fails, and the next turn reads it afresh", async () => {
    // An agent with neither relay socket nor webhook: its turns go to the mailbox, by the one-trip function.
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    await service.core.callEngine.callerUtterance(callId, "question 0");
    expect(
      conversations(service.core)
        .get(callId)
        ?.lines.map((l) => l.text),
    ).toEqual(["question 0"]);

    // The database refuses the next turn: the function fails, nothing of the turn is written.
    await service.core.db.execute(
      sql.raw(`
      create function refuse_marked_turns() returns trigger language plpgsql as $$
      begin
        if new.text = 'refused words' then raise exception 'turn refused by the test'; end if;
        return new;
      end $$`),
    );
    await service.core.db.execute(sql.raw("create trigger refuse_marked_turns before insert on turns for each row execute function refuse_marked_turns()"));
    try {
      const failed = await service.core.callEngine.callerUtterance(callId, "refused words").catch((error: unknown) => error);
      // The database's own error reaches the caller of the turn...
      const messages: string[] = [];
      for (let e = failed as { message?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) messages.push(String(e.message));
      expect(messages.join("\n")).toContain("turn refused by the test");
      // ...and the process no longer trusts its copy of the conversation, which it could not tell
      // the failed turn had left as it was.
      expect(conversations(service.core).get(callId)).toBeUndefined();
    } finally {
      await service.core.db.execute(sql.raw("drop trigger refuse_marked_turns on turns"));
      await service.core.db.execute(sql.raw("drop function refuse_marked_turns()"));
    }

    await service.core.callEngine.callerUtterance(callId, "question 1");
    const events = await drainEvents(api, agentId);
    expect(events.map((e) => e.payload.text)).toEqual(["question 0", "question 1"]);
    // The next turn carried the conversation as the transcript has it, read afresh, and the copy is kept again.
    expect(events[1].conversation.map((l: { text: string }) => l.text)).toEqual(["question 0", "question 1"]);
    expect(events[1].conversation).toEqual((await api.get(`/v1/calls/${callId}/transcript`)).body);
    expect(conversations(service.core).get(callId)?.lines).toEqual(events[1].conversation);
  });
});
