import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { httpMcp, type McpSession } from "../support/mcp.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
let mcp: McpSession;

beforeAll(async () => {
  // A long turn timeout keeps the filler line out of the transcript on a busy machine.
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "30000" } });
  const account = await createAccount(service.core, undefined, { creditMicros: 20_000_000 });
  mcp = await httpMcp(service.baseUrl, account.apiKey);
});
afterAll(async () => {
  await mcp?.close();
  await service?.stop();
});

describe("an LLM agent holding a sandbox phone conversation through MCP tools alone", () => {
  it("buys a number, calls, answers each turn, is told its stale answer was discarded, and reads the transcript", async () => {
    const { balance: before, rate_card } = await mcp.ok("get_balance");
    const agent = await mcp.ok("create_agent", { name: "Concierge" });
    const number = await mcp.ok("buy_number", { agent_id: agent.agent_id });
    expect(number.status).toBe("active");

    const call = await mcp.ok("place_call", { agent_id: agent.agent_id, to_number: "+14155550142" });
    expect(call.status).toBe("in-progress");

    // The agent waits first; the caller speaks while it waits, and the wait returns with the turn.
    const waiting = mcp.ok("wait_for_event", { call_id: call.call_id, event_types: ["call.utterance"], timeout_seconds: 20 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await mcp.ok("simulate_caller_speech", { call_id: call.call_id, text: "Hi, I'd like a table for two." });
    const first = await waiting;
    expect(first.timed_out).toBe(false);
    expect(first.events).toHaveLength(1);
    const hello = first.events[0];
    expect(hello).toMatchObject({ event_type: "call.utterance", call_id: call.call_id, payload: { text: "Hi, I'd like a table for two." } });
    // No conversation so far (the model holds it; get_transcript has it): a long call would cost tokens quadratic in its length.
    expect(hello).not.toHaveProperty("conversation");
    const spoken = await mcp.ok("push_context", { call_id: call.call_id, turn_id: hello.turn_id, text: "Of course. For what time?" });
    expect(spoken).toMatchObject({ turn_status: "answered", call_ending: false });

    // The caller says two things before the agent answers the first: that answer is now stale.
    await mcp.ok("simulate_caller_speech", { call_id: call.call_id, text: "Seven tonight." });
    await mcp.ok("simulate_caller_speech", { call_id: call.call_id, text: "Actually, make it eight." });
    const next = await mcp.ok("wait_for_event", { cursor: first.cursor, timeout_seconds: 10 });
    expect(next.events.map((e: any) => e.payload.text)).toEqual(["Seven tonight.", "Actually, make it eight."]);
    const [older, newer] = next.events;
    const refused = await mcp.fails("push_context", { call_id: call.call_id, turn_id: older.turn_id, text: "Seven it is." });
    expect(refused).toMatch(/^turn_stale \(Turn is stale\): .*caller has spoken again/);
    expect(refused).toMatch(/Next step: Discard this answer.*wait_for_event.*turn_id/);

    const goodbye = await mcp.ok("push_context", { call_id: call.call_id, turn_id: newer.turn_id, text: "Eight o'clock it is. Goodbye!", end_call: true });
    expect(goodbye.call_ending).toBe(true);

    const ended = await mcp.ok("wait_for_event", { call_id: call.call_id, event_types: ["call.completed"], timeout_seconds: 20 });
    expect(ended.events).toHaveLength(1);
    expect(ended.events[0].payload).toMatchObject({ call_id: call.call_id, status: "completed", ended_by: "agent" });

    // An answer after the end is refused with what to do instead.
    const late = await mcp.fails("push_context", { call_id: call.call_id, turn_id: newer.turn_id, text: "Hello?" });
    expect(late).toMatch(/^call_ended .*\nNext step: Stop working on this call\. get_transcript/);

    const { transcript } = await mcp.ok("get_transcript", { call_id: call.call_id });
    expect(transcript.map((line: any) => [line.role, line.text])).toEqual([
      ["user", "Hi, I'd like a table for two."],
      ["assistant", "Of course. For what time?"],
      ["user", "Seven tonight."],
      ["user", "Actually, make it eight."],
      ["assistant", "Eight o'clock it is. Goodbye!"],
    ]);
    const finished = await mcp.ok("get_call", { call_id: call.call_id });
    expect(finished).toMatchObject({ status: "completed", ended_by: "agent" });

    // Nothing is left for this call, and a wait with nothing to return says so when it times out.
    const quiet = await mcp.ok("wait_for_event", { call_id: call.call_id, timeout_seconds: 1 });
    expect(quiet).toMatchObject({ events: [], timed_out: true, has_more: false });

    // What it cost: the number's first month and the call's talk time, nothing else.
    expect(Number(finished.charge)).toBeGreaterThan(0);
    const { balance: after } = await mcp.ok("get_balance");
    expect(Number(before) - Number(after)).toBeCloseTo(Number(rate_card.numbers.local.monthly) + Number(finished.charge), 6);
  });

  it("tells an agent whose events go to a webhook that waiting here will not see them", async () => {
    const agent = await mcp.ok("create_agent", { name: "Hooked" });
    await mcp.ok("set_webhook", { agent_id: agent.agent_id, url: "https://hooks.example.com/agentline" });
    const result = await mcp.ok("wait_for_event", { agent_id: agent.agent_id, timeout_seconds: 0 });
    expect(result.timed_out).toBe(true);
    expect(result.hint).toMatch(/has a webhook.*delete_webhook/);
  });
});
