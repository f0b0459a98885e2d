import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { httpMcp, type McpSession } from "../support/mcp.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
let mine: McpSession;
let theirs: McpSession;

beforeAll(async () => {
  service = await startTestService();
  mine = await httpMcp(service.baseUrl, (await createAccount(service.core)).apiKey);
  theirs = await httpMcp(service.baseUrl, (await createAccount(service.core)).apiKey);
});
afterAll(async () => {
  await mine?.close();
  await theirs?.close();
  await service?.stop();
});

describe("MCP tool errors: results the model can act on, never protocol errors", () => {
  it("answers another account's ids as not found, and changes nothing of theirs", async () => {
    const agent = await theirs.ok("create_agent", { name: "Theirs" });
    const number = await theirs.ok("buy_number", { agent_id: agent.agent_id });
    const call = await theirs.ok("place_call", { agent_id: agent.agent_id, to_number: "+14155550142" });
    const { turn_id } = await theirs.ok("simulate_caller_speech", { call_id: call.call_id, text: "Hello?" });
    const mineAgent = await mine.ok("create_agent", { name: "Mine" });

    const attempts: Array<[string, Record<string, unknown>]> = [
      ["get_agent", { agent_id: agent.agent_id }],
      ["update_agent", { agent_id: agent.agent_id, name: "Hijacked" }],
      ["delete_agent", { agent_id: agent.agent_id }],
      ["buy_number", { agent_id: agent.agent_id }],
      ["get_number", { number_id: number.number_id }],
      ["reassign_number", { number_id: number.number_id, agent_id: mineAgent.agent_id }],
      ["release_number", { number_id: number.number_id }],
      ["place_call", { agent_id: agent.agent_id, to_number: "+14155550142" }],
      ["get_call", { call_id: call.call_id }],
      ["get_transcript", { call_id: call.call_id }],
      ["push_context", { call_id: call.call_id, turn_id, text: "Not yours to answer." }],
      ["hang_up_call", { call_id: call.call_id }],
      ["wait_for_event", { agent_id: agent.agent_id, timeout_seconds: 30 }],
      ["wait_for_event", { call_id: call.call_id, timeout_seconds: 30 }],
      ["peek_events", { agent_id: agent.agent_id }],
      ["set_webhook", { agent_id: agent.agent_id, url: "https://attacker.example.com/hook" }],
      ["simulate_caller_speech", { call_id: call.call_id, text: "Spoofed" }],
      ["simulate_caller_hangup", { call_id: call.call_id }],
    ];
    for (const [tool, args] of attempts) {
      const started = Date.now();
      const text = await mine.fails(tool, args);
      expect(text, tool).toMatch(/^not_found \(Not found\): /);
      expect(text, tool).toMatch(/Next step: Check the id: list_agents, list_numbers and list_calls/);
      expect(Date.now() - started, `${tool} answered at once, without waiting`).toBeLessThan(10_000);
    }

    expect((await theirs.ok("get_agent", { agent_id: agent.agent_id })).name).toBe("Theirs");
    expect((await theirs.ok("get_number", { number_id: number.number_id })).agent_id).toBe(agent.agent_id);
    expect((await theirs.ok("get_call", { call_id: call.call_id })).status).toBe("in-progress");
    expect((await theirs.ok("peek_events", { agent_id: agent.agent_id })).data.map((e: any) => e.payload.text)).toEqual(["Hello?"]);
    expect((await mine.ok("list_numbers")).data).toEqual([]);
  });

  it("names each bad argument, with a next step, and writes nothing", async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ["create_agent", {}, /- name: is required/],
      ["create_agent", { name: 42 }, /- name: Invalid input: expected string, received number/],
      ["create_agent", { name: "Ok", colour: "blue" }, /- colour: is not a recognised field/],
      ["create_agent", { name: "A\u0000B" }, /- name: contains a NUL character/],
      ["create_agent", { name: "Ok", owner_number: "555-1234" }, /- owner_number: must be an E\.164 phone number/],
      ["buy_number", { agent_id: "agt_x", country: "usa" }, /- country: must be a two-letter ISO 3166 country code/],
      ["list_calls", { limit: 1000 }, /- limit: /],
      ["place_call", { agent_id: "agt_x" }, /- to_number: is required/],
      ["push_context", { call_id: "call_x", turn_id: "turn_x", text: "   " }, /- text: /],
      ["wait_for_event", { timeout_seconds: 120 }, /- timeout_seconds: /],
      ["wait_for_event", { event_types: ["call.nonsense"] }, /- event_types\.0: /],
      ["wait_for_event", { cursor: "not-a-cursor" }, /- cursor: is not a cursor from wait_for_event/],
      [
        "set_webhook",
        { agent_id: "agt_x", url: "https://example.com/h", capabilities: ["supports_amend"] },
        /- capabilities: apply to protocol service-relay\/2 only/,
      ],
    ];
    for (const [tool, args, field] of cases) {
      const text = await mine.fails(tool, args);
      expect(text, tool).toMatch(/^validation_error \(Validation failed\): /);
      expect(text, tool).toMatch(field);
      expect(text, tool).toContain(`Next step: Correct the fields listed and call ${tool} again`);
    }
    // An unknown tool is a protocol error (-32602), as the spec's error handling says: see transport.test.ts.
    expect((await mine.ok("list_agents")).data.map((a: any) => a.name)).toEqual(["Mine"]);
  });

  it("refuses what the balance does not cover, says how to top up, and charges nothing", async () => {
    const card = (await mine.ok("get_balance")).rate_card;
    const poor = await createAccount(service.core, undefined, { creditMicros: Math.round(Number(card.numbers.local.monthly) * 1_000_000) });
    const session = await httpMcp(service.baseUrl, poor.apiKey);
    try {
      const agent = await session.ok("create_agent", { name: "On a budget" });
      const refused = await session.fails("buy_number", { agent_id: agent.agent_id, number_type: "toll_free" });
      expect(refused).toMatch(/^insufficient_balance \(Insufficient balance\): /);
      expect(refused).toMatch(/Details: \{"required":"\d+\.\d{6}","balance":"\d+\.\d{6}","currency":"USD"\}/);
      expect(refused).toMatch(/Next step: Add money, then try again: get_balance .*\/v1\/billing\/topup\/x402\/pay/);
      expect((await session.ok("list_numbers")).data).toEqual([]);

      // The local number fits exactly; then there is nothing left for a call's first minute.
      await session.ok("buy_number", { agent_id: agent.agent_id });
      expect((await session.ok("get_balance")).balance).toBe("0.000000");
      expect(await session.fails("place_call", { agent_id: agent.agent_id, to_number: "+14155550142" })).toMatch(
        /^insufficient_balance .*\nNext step: Add money/s,
      );
      expect((await session.ok("list_calls")).data).toEqual([]);
      expect(await session.fails("send_text", { agent_id: agent.agent_id, to_number: "+14155550142", text: "hi" })).toMatch(
        /^insufficient_balance .*\nNext step: Add money/s,
      );
      expect((await session.ok("list_messages")).data).toEqual([]);

      const noNumber = await session.ok("create_agent", { name: "No number" });
      expect(await session.fails("place_call", { agent_id: noNumber.agent_id, to_number: "+14155550142" })).toMatch(
        /^no_active_number .*\nNext step: Give the agent a number first \(buy_number/s,
      );
    } finally {
      await session.close();
    }
  });

  it("refuses a text to a recipient who texted STOP, saying not to text them again", async () => {
    const agent = await mine.ok("create_agent", { name: "Texter" });
    const number = await mine.ok("buy_number", { agent_id: agent.agent_id });
    await mine.ok("simulate_inbound_text", { to_number: number.phone_number, from_number: "+14155550143", text: "STOP" });
    expect(await mine.fails("send_text", { agent_id: agent.agent_id, to_number: "+14155550143", text: "hi" })).toMatch(
      /^recipient_opted_out \(Recipient opted out\): .*\nNext step: Do not text this number again/s,
    );
    expect((await mine.ok("list_messages", { agent_id: agent.agent_id })).data.map((m: any) => m.direction)).toEqual(["inbound"]);
  });
});
