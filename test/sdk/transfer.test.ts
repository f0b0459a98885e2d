import { Agentline, onTurn, type PushOutcome, unwrap } from "@agentline/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { httpMcp } from "../support/mcp.js";
import { startTestService, type TestService } from "../support/service.js";

// Transferring from the clients against the real sandbox: the SDK's turn.transfer and a
// `{ transferTo }` answer over the relay, and the MCP tool transfer_call through the MCP SDK's
// own client (its refusals come back as tool errors naming the code).
let service: TestService;
let agentline: Agentline;
let apiKey: string;

beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000", TRANSFER_TIMEOUT_MS: "300" } });
  const account = await createAccount(service.core);
  apiKey = account.apiKey;
  agentline = new Agentline({ baseUrl: service.baseUrl, apiKey });
});
afterAll(() => service?.stop());

async function eventually<T>(check: () => Promise<T> | T, what: string, ms = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An agent whose relay answers turns with `handler`, and a connected call to it. */
async function relayCall(handler: Parameters<typeof onTurn>[0]) {
  const agent = unwrap(await agentline.api.POST("/v1/agents", { body: { name: "Transfers" } }));
  unwrap(await agentline.api.POST("/v1/numbers", { body: { agent_id: agent.agent_id } }));
  const events: any[] = [];
  const connection = agentline.relay(agent.agent_id, {
    ...onTurn(handler),
    "call.transfer.started": (e) => void events.push(e),
    "call.transfer.answered": (e) => void events.push(e),
    "call.transfer.failed": (e) => void events.push(e),
  });
  await connection.ready;
  const call = unwrap(await agentline.api.POST("/v1/calls", { body: { agent_id: agent.agent_id, to_number: "+14155550142" } }));
  const callPath = { params: { path: { call_id: call.call_id } } };
  return {
    connection,
    events,
    callPath,
    say: async (text: string) => unwrap(await agentline.api.POST("/v1/sandbox/calls/{call_id}/say", { ...callPath, body: { text } })),
    getCall: async () => unwrap(await agentline.api.GET("/v1/calls/{call_id}", callPath)),
  };
}

describe("the SDK", () => {
  it("turn.transfer answers the turn with a warm transfer; a failed one comes back as a turn", async () => {
    const outcomes: PushOutcome[] = [];
    const heard: string[] = [];
    const call = await relayCall(async (turn) => {
      heard.push(turn.text);
      if (turn.text === "Get me a human.") {
        outcomes.push(await turn.transfer("+14155550001", { mode: "warm", whisper: "Caller wants a human.", text: "One moment." }));
        return undefined;
      }
      return "Sorry, nobody answered. How else can I help?";
    });
    try {
      await call.say("Get me a human.");
      await eventually(() => heard.includes("[transfer failed: busy]"), "the failed transfer's turn");
      expect(outcomes).toEqual([{ status: "spoken" }]);
      const types = await eventually(() => (call.events.length >= 2 ? call.events.map((e) => e.event_type) : undefined), "transfer events");
      expect(types).toEqual(["call.transfer.started", "call.transfer.failed"]);
      expect(call.events[1].payload).toMatchObject({ reason: "busy", turn_text: "[transfer failed: busy]" });
      const transcript = unwrap(await agentline.api.GET("/v1/calls/{call_id}/transcript", call.callPath)).map((l) => `${l.role}: ${l.text}`);
      await eventually(async () => (await call.getCall()).transfer_status === "failed", "the failed transfer");
      expect(transcript.slice(0, 3)).toEqual(["user: Get me a human.", "assistant: One moment.", "user: [transfer failed: busy]"]);
    } finally {
      await call.connection.close();
    }
  });

  it("a { transferTo } answer hands the call over cold", async () => {
    const call = await relayCall(() => ({ transferTo: "+14155557777" }));
    try {
      await call.say("Transfer me.");
      await eventually(async () => (await call.getCall()).transferred_to === "+14155557777", "the bridged call");
      expect((await call.getCall()).transfer_status).toBe("bridged");
    } finally {
      await call.connection.close();
    }
  });
});

describe("the MCP tool transfer_call", () => {
  it("transfers through the MCP SDK's client, and refuses a second transfer and an ended call with their codes", async () => {
    const mcp = await httpMcp(service.baseUrl, apiKey);
    try {
      const agent = await mcp.ok("create_agent", { name: "MCP transfers" });
      await mcp.ok("buy_number", { agent_id: agent.agent_id });
      const call = await mcp.ok("place_call", { agent_id: agent.agent_id, to_number: "+14155550142" });
      const transferred = await mcp.ok("transfer_call", { call_id: call.call_id, to_number: "+14155557777" });
      expect(transferred).toMatchObject({ call_id: call.call_id, transfer_status: "dialing" });
      const answered = await mcp.ok("wait_for_event", { call_id: call.call_id, event_types: ["call.transfer.answered"], timeout_seconds: 5 });
      expect(answered.events[0].payload).toMatchObject({ to_number: "+14155557777", mode: "cold" });
      expect(await mcp.fails("transfer_call", { call_id: call.call_id, to_number: "+14155558888" })).toContain("transfer_in_progress");
      expect(await mcp.fails("transfer_call", { call_id: call.call_id, to_number: "not-a-number" })).toContain("to_number");
      await mcp.ok("hang_up_call", { call_id: call.call_id });
      expect(await mcp.fails("transfer_call", { call_id: call.call_id, to_number: "+14155557777" })).toContain("call_ended");

      // push_context takes a transfer as the turn's answer too.
      const second = await mcp.ok("place_call", { agent_id: agent.agent_id, to_number: "+14155550142" });
      const { turn_id } = await mcp.ok("simulate_caller_speech", { call_id: second.call_id, text: "A person, please." });
      const answered2 = await mcp.ok("push_context", { call_id: second.call_id, turn_id, text: "Connecting you.", transfer_to: "+14155557777" });
      expect(answered2).toMatchObject({ turn_status: "answered", transfer: { to_number: "+14155557777", mode: "cold" } });
      await mcp.ok("wait_for_event", { call_id: second.call_id, event_types: ["call.transfer.answered"], timeout_seconds: 5 });
      expect((await mcp.ok("get_transcript", { call_id: second.call_id })).transcript.map((l: any) => l.text)).toEqual([
        "A person, please.",
        "Connecting you.",
      ]);
    } finally {
      await mcp.close();
    }
  });
});
