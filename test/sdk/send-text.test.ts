import { Agentline, AgentlineError, type AgentlineEvent, unwrap } from "@agentline/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
let agentline: Agentline;

beforeAll(async () => {
  service = await startTestService();
  const account = await createAccount(service.core);
  agentline = new Agentline({ baseUrl: service.baseUrl, apiKey: account.apiKey });
});
afterAll(() => service?.stop());

async function agentWithNumber() {
  const agent = unwrap(await agentline.api.POST("/v1/agents", { body: { name: "Texter" } }));
  const number = unwrap(await agentline.api.POST("/v1/numbers", { body: { agent_id: agent.agent_id } }));
  return { agentId: agent.agent_id, phoneNumber: number.phone_number };
}

describe("client.sendText", () => {
  it("sends from the agent's number and resolves to the queued text; sms.status arrives on the relay, typed", { timeout: 30_000 }, async () => {
    const { agentId, phoneNumber } = await agentWithNumber();
    const statuses: Array<AgentlineEvent<"sms.status">["payload"]> = [];
    const connection = agentline.relay(agentId, { "sms.status": (event) => statuses.push(event.payload) });
    try {
      await connection.ready;
      const message = await agentline.sendText(agentId, "+14155550160", "See you at 3 ✓");
      expect(message).toMatchObject({ direction: "outbound", status: "queued", segments: 1, from_number: phoneNumber, to_number: "+14155550160" });
      const deadline = Date.now() + 10_000;
      while (statuses.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      expect(statuses.map((s) => [s.message_id, s.status])).toEqual([
        [message.message_id, "sent"],
        [message.message_id, "delivered"],
      ]);
    } finally {
      await connection.close();
    }
  });

  it("sends from another of the agent's numbers with fromNumber", async () => {
    const { agentId } = await agentWithNumber();
    const second = unwrap(await agentline.api.POST("/v1/numbers", { body: { agent_id: agentId } }));
    expect((await agentline.sendText(agentId, "+14155550161", "Hi", { fromNumber: second.phone_number })).from_number).toBe(second.phone_number);
  });

  it("rejects with AgentlineError: recipient_opted_out after STOP, validation_error naming text when empty", async () => {
    const { agentId, phoneNumber } = await agentWithNumber();
    unwrap(await agentline.api.POST("/v1/sandbox/inbound/sms", { body: { to_number: phoneNumber, from_number: "+14155550162", text: "STOP" } }));
    const opted = await agentline.sendText(agentId, "+14155550162", "Hi").catch((e: unknown) => e);
    expect(opted).toBeInstanceOf(AgentlineError);
    expect(opted).toMatchObject({ status: 409, code: "recipient_opted_out" });
    const empty = await agentline.sendText(agentId, "+14155550163", "").catch((e: unknown) => e);
    expect(empty).toMatchObject({ status: 422, code: "validation_error", errors: [expect.objectContaining({ field: "text" })] });
  });
});
