import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { adminCommand, databaseForProcess, httpMcp, type McpSession, stdioMcp } from "../support/mcp.js";
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
      // The top-up address in full: a relative path leads nowhere from a model's client.
      expect(refused).toContain(`Next step: Add money, then call buy_number again: get_balance shows the balance and the prices.`);
      expect(refused).toContain(` pays ${service.baseUrl}/v1/billing/topup/x402/pay?amount=5 over HTTP`);
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

  it("names tools, not REST routes, in what core's errors say, and a bad turn_id gets its own hint", async () => {
    const REST = /\b(GET|POST|PUT|PATCH|DELETE) \/|\/v1\//;
    const agent = await mine.ok("create_agent", { name: "Wordy" });
    const noNumber = await mine.fails("place_call", { agent_id: agent.agent_id, to_number: "+14155550142" });
    expect(noNumber).toMatch(/^no_active_number .*Buy one with buy_number, then place the call\./);
    const noText = await mine.fails("send_text", { agent_id: agent.agent_id, to_number: "+14155550142", text: "hi" });
    expect(noText).toMatch(/buy one with buy_number/);
    expect(await mine.fails("get_webhook", { agent_id: agent.agent_id })).toMatch(/set_webhook creates one/);

    await mine.ok("buy_number", { agent_id: agent.agent_id });
    const call = await mine.ok("place_call", { agent_id: agent.agent_id, to_number: "+14155550142" });
    const { turn_id } = await mine.ok("simulate_caller_speech", { call_id: call.call_id, text: "Hello?" });
    const open = await mine.fails("say_on_call", { call_id: call.call_id, text: "Still there?" });
    expect(open).toContain(`answer it with push_context (call_id ${call.call_id}, turn_id ${turn_id}) instead`);
    for (const text of [noNumber, noText, open]) expect(text).not.toMatch(REST);

    // Turn ids come from call.utterance, not from a list: the hint says where to look.
    const badTurn = await mine.fails("push_context", { call_id: call.call_id, turn_id: "turn_nonesuch", text: "Hi." });
    expect(badTurn).toMatch(/^not_found \(Not found\): No turn with id "turn_nonesuch"/);
    expect(badTurn).toMatch(/\nNext step: Check the turn_id: it is the turn_id of the call\.utterance being answered, exactly/);
    expect(badTurn).not.toContain("list_agents");
    expect((await mine.ok("push_context", { call_id: call.call_id, turn_id, text: "Hi." })).turn_status).toBe("answered");
  });

  it("takes null for an optional field as left out, and a whole number where digits are asked, as models send them", async () => {
    const agent = await mine.ok("create_agent", { name: "Lenient", description: null, greeting: null, owner_number: null });
    expect(agent).toMatchObject({ description: null, greeting: null, owner_number: null });
    const number = await mine.ok("buy_number", { agent_id: agent.agent_id, area_code: 415, country: null, number_type: null });
    expect(number).toMatchObject({ phone_number: expect.stringMatching(/^\+1415/), country: "US", number_type: "local" });
    // Where null means something (clearing a field), it still does.
    await mine.ok("update_agent", { agent_id: agent.agent_id, description: "Front desk" });
    expect((await mine.ok("update_agent", { agent_id: agent.agent_id, description: null })).description).toBeNull();
    const call = await mine.ok("place_call", { agent_id: agent.agent_id, to_number: "+14155550142", from_number: null, greeting: null });
    expect((await mine.ok("send_digits", { call_id: call.call_id, digits: 12 })).digits).toBe("12");
    await mine.ok("hang_up_call", { call_id: call.call_id });

    // What is still wrong is still refused, named.
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ["create_agent", { name: null }, /- name: /],
      ["create_agent", { name: 42 }, /- name: Invalid input: expected string, received number/],
      ["buy_number", { agent_id: agent.agent_id, area_code: 4150000 }, /- area_code: /],
      ["buy_number", { agent_id: agent.agent_id, area_code: 4.15 }, /- area_code: /],
      ["place_call", { agent_id: agent.agent_id, to_number: 14155550142 }, /- to_number: /],
    ];
    for (const [tool, args, field] of cases) expect(await mine.fails(tool, args), `${tool} ${JSON.stringify(args)}`).toMatch(field);
    expect((await mine.ok("list_numbers", { agent_id: agent.agent_id })).data).toHaveLength(1);
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

describe("a tool error over stdio, where the service has no HTTP address", () => {
  let database: Awaited<ReturnType<typeof databaseForProcess>>;
  beforeAll(async () => {
    database = await databaseForProcess();
  });
  afterAll(() => database?.drop());

  it("says how to top up with the operator's command, which then works", async () => {
    const env = { ...database.env, SIGNUP_CREDIT_USD: "0" };
    const { api_key } = adminCommand(env, ["api-key", "--email", "stdio-topup@example.com"]);
    let mcp = await stdioMcp({ ...env, AGENTLINE_API_KEY: api_key });
    let agentId: string;
    try {
      agentId = (await mcp.ok("create_agent", { name: "Broke" })).agent_id;
      const refused = await mcp.fails("buy_number", { agent_id: agentId });
      expect(refused).toMatch(/^insufficient_balance /);
      expect(refused).not.toMatch(/\/v1\//);
      const command = refused.match(/`agentline admin credit --account (acct_\w+) --amount 5 --note "top-up"` on this server's database/);
      expect(command, refused).not.toBeNull();
      // The embedded database takes one process at a time, as the hint says: the server stops first.
      await mcp.close();
      adminCommand(env, ["credit", "--account", command![1]!, "--amount", "5", "--note", "top-up"]);
      mcp = await stdioMcp({ ...env, AGENTLINE_API_KEY: api_key });
      expect((await mcp.ok("buy_number", { agent_id: agentId })).status).toBe("active");
    } finally {
      await mcp.close();
    }
  }, 60_000);
});
