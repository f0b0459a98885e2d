import { Agentline, AgentlineError, unwrap } from "@agentline/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";

// The SDK's helpers for speaking first and keypad digits against the real sandbox: a greeting and
// from_number on a placed call through the typed client, `say` and `sendDigits`, and their
// refusals as AgentlineErrors with the problem's code.
let service: TestService;
let agentline: Agentline;
let apiKey: string;

beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000" } });
  apiKey = (await createAccount(service.core)).apiKey;
  agentline = new Agentline({ baseUrl: service.baseUrl, apiKey });
});
afterAll(() => service?.stop());

async function liveCall(greeting?: string) {
  const agent = unwrap(await agentline.api.POST("/v1/agents", { body: { name: "SDK agent" } }));
  const first = unwrap(await agentline.api.POST("/v1/numbers", { body: { agent_id: agent.agent_id } }));
  const second = unwrap(await agentline.api.POST("/v1/numbers", { body: { agent_id: agent.agent_id } }));
  const call = unwrap(
    await agentline.api.POST("/v1/calls", {
      body: { agent_id: agent.agent_id, to_number: "+14155550191", from_number: second.phone_number, ...(greeting ? { greeting } : {}) },
    }),
  );
  const phone = await Softphone.connect(service.baseUrl, call.call_id, apiKey);
  await phone.next((f) => f.type === "status");
  return { agent, first, second, call, phone };
}

describe("the SDK", () => {
  it("places a call from a named number with a greeting, says a line and presses keys", async () => {
    const { second, call, phone } = await liveCall("Hello, this is Acme.");
    expect(call.from_number).toBe(second.phone_number);
    expect(await phone.next((f) => f.type === "speech")).toMatchObject({ text: "Hello, this is Acme.", turn_id: null });
    const said = await agentline.say(call.call_id, "Are you still there?");
    expect(said).toMatchObject({ call_id: call.call_id, call_ending: false });
    await phone.next((f) => f.type === "speech" && f.text === "Are you still there?");
    expect(await agentline.sendDigits(call.call_id, "3#")).toMatchObject({ call_id: call.call_id, digits: "3#" });
    expect(await phone.next((f) => f.type === "digits")).toEqual({ type: "digits", digits: "3#" });
    expect((await agentline.say(call.call_id, "Goodbye.", { endCall: true })).call_ending).toBe(true);
    await phone.closed;
    const transcript = unwrap(await agentline.api.GET("/v1/calls/{call_id}/transcript", { params: { path: { call_id: call.call_id } } }));
    expect(transcript.map((l) => l.text)).toEqual(["Hello, this is Acme.", "Are you still there?", "Goodbye."]);
  });

  it("throws AgentlineErrors with the problem's code: turn_open, call_ended, a 422 naming digits", async () => {
    const { call, phone } = await liveCall();
    phone.send({ type: "say", text: "Hi?" });
    await phone.next((f) => f.type === "said");
    const open = await agentline.say(call.call_id, "Anyone there?").catch((e: unknown) => e);
    expect(open).toBeInstanceOf(AgentlineError);
    expect(open).toMatchObject({ status: 409, code: "turn_open" });
    const bad = await agentline.sendDigits(call.call_id, "12345678901234567890123456789012345").catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 422, code: "validation_error", errors: [expect.objectContaining({ field: "digits" })] });
    unwrap(await agentline.api.POST("/v1/calls/{call_id}/hangup", { params: { path: { call_id: call.call_id } } }));
    await phone.closed;
    expect(await agentline.sendDigits(call.call_id, "1").catch((e: unknown) => e)).toMatchObject({ status: 410, code: "call_ended" });
    expect(phone.frames.filter((f) => f.type === "digits")).toEqual([]);
  });
});
