import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { httpMcp, type McpSession } from "../support/mcp.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";

// Speaking first and keypad digits through the MCP SDK's own client: place_call's greeting and
// from_number, say_on_call, send_digits, and their refusals as tool errors the model can act on
// (each changing nothing).
let service: TestService;
let mcp: McpSession;
let api: Api;
let apiKey: string;

beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000" } });
  apiKey = (await createAccount(service.core)).apiKey;
  mcp = await httpMcp(service.baseUrl, apiKey);
  api = new Api(service.baseUrl, apiKey);
});
afterAll(async () => {
  await mcp?.close();
  await service?.stop();
});

async function agentWithTwoNumbers() {
  const agent = await mcp.ok("create_agent", { name: "Caller", greeting: "Hello from the front desk." });
  expect(agent.greeting).toBe("Hello from the front desk.");
  const first = await mcp.ok("buy_number", { agent_id: agent.agent_id });
  const second = await mcp.ok("buy_number", { agent_id: agent.agent_id });
  return { agentId: agent.agent_id as string, first: first.phone_number as string, second: second.phone_number as string };
}

describe("place_call with greeting and from_number", () => {
  it("calls from the named number and speaks the greeting on answer", async () => {
    const { agentId, second } = await agentWithTwoNumbers();
    const call = await mcp.ok("place_call", { agent_id: agentId, to_number: "+14155550181", from_number: second, greeting: "Hi, Acme calling." });
    expect(call).toMatchObject({ from_number: second, status: "in-progress" });
    const phone = await Softphone.connect(service.baseUrl, call.call_id, apiKey);
    expect(await phone.next((f) => f.type === "speech")).toMatchObject({ text: "Hi, Acme calling.", turn_id: null });
    expect((await mcp.ok("get_transcript", { call_id: call.call_id })).transcript.map((l: any) => [l.role, l.text])).toEqual([
      ["assistant", "Hi, Acme calling."],
    ]);
    await mcp.ok("hang_up_call", { call_id: call.call_id });
  });

  it("refuses a from_number of another agent, naming the field, and places nothing", async () => {
    const { agentId } = await agentWithTwoNumbers();
    const other = await agentWithTwoNumbers();
    const text = await mcp.fails("place_call", { agent_id: agentId, to_number: "+14155550182", from_number: other.first });
    expect(text).toContain("from_number");
    expect((await mcp.ok("list_calls", { agent_id: agentId })).data).toEqual([]);
  });
});

describe("say_on_call and send_digits", () => {
  it("speak a line and press keys on a live call; the softphone hears both", async () => {
    const { agentId } = await agentWithTwoNumbers();
    const call = await mcp.ok("place_call", { agent_id: agentId, to_number: "+14155550183" });
    const phone = await Softphone.connect(service.baseUrl, call.call_id, apiKey);
    await phone.next((f) => f.type === "status");
    expect(await mcp.ok("say_on_call", { call_id: call.call_id, text: "Connecting you to billing." })).toMatchObject({
      call_id: call.call_id,
      call_ending: false,
    });
    expect(await phone.next((f) => f.type === "speech")).toMatchObject({ text: "Connecting you to billing.", turn_id: null });
    expect(await mcp.ok("send_digits", { call_id: call.call_id, digits: "2w1" })).toMatchObject({ call_id: call.call_id, digits: "2w1" });
    expect(await phone.next((f) => f.type === "digits")).toEqual({ type: "digits", digits: "2w1" });
    expect((await mcp.ok("say_on_call", { call_id: call.call_id, text: "Goodbye.", end_call: true })).call_ending).toBe(true);
    expect((await mcp.ok("get_call", { call_id: call.call_id })).status).toBe("completed");
  });

  it("say_on_call while a turn waits: a turn_open tool error pointing at push_context; nothing said", async () => {
    const { agentId } = await agentWithTwoNumbers();
    const call = await mcp.ok("place_call", { agent_id: agentId, to_number: "+14155550184" });
    const { turn_id } = await mcp.ok("simulate_caller_speech", { call_id: call.call_id, text: "Hello?" });
    const text = await mcp.fails("say_on_call", { call_id: call.call_id, text: "Are you there?" });
    expect(text).toContain("turn_open");
    expect(text).toContain(turn_id);
    expect(text).toContain("push_context");
    expect((await mcp.ok("get_transcript", { call_id: call.call_id })).transcript.map((l: any) => l.role)).toEqual(["user"]);
    await mcp.ok("hang_up_call", { call_id: call.call_id });
  });

  it("send_digits with a key outside 0-9*#w, and on an ended call: tool errors, nothing sent", async () => {
    const { agentId } = await agentWithTwoNumbers();
    const call = await mcp.ok("place_call", { agent_id: agentId, to_number: "+14155550185" });
    const phone = await Softphone.connect(service.baseUrl, call.call_id, apiKey);
    await phone.next((f) => f.type === "status");
    expect(await mcp.fails("send_digits", { call_id: call.call_id, digits: "1p" })).toContain("digits");
    await mcp.ok("hang_up_call", { call_id: call.call_id });
    await phone.closed;
    expect(await mcp.fails("send_digits", { call_id: call.call_id, digits: "1" })).toContain("call_ended");
    expect(await mcp.fails("say_on_call", { call_id: call.call_id, text: "Hello?" })).toContain("call_ended");
    expect(phone.frames.filter((f) => f.type === "digits" || f.type === "speech")).toEqual([]);
    expect((await api.get(`/v1/calls/${call.call_id}/transcript`)).body).toEqual([]);
  });

  it("another account's call is not found", async () => {
    const { agentId } = await agentWithTwoNumbers();
    const call = await mcp.ok("place_call", { agent_id: agentId, to_number: "+14155550186" });
    const mallory = await httpMcp(service.baseUrl, (await createAccount(service.core)).apiKey);
    try {
      expect(await mallory.fails("say_on_call", { call_id: call.call_id, text: "Hijacked.", end_call: true })).toContain("not_found");
      expect(await mallory.fails("send_digits", { call_id: call.call_id, digits: "9" })).toContain("not_found");
    } finally {
      await mallory.close();
    }
    expect((await mcp.ok("get_call", { call_id: call.call_id })).status).toBe("in-progress");
    await mcp.ok("hang_up_call", { call_id: call.call_id });
  });
});
