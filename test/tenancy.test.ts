import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "./support/accounts.js";
import { Api } from "./support/api.js";
import { startTestService, type TestService } from "./support/service.js";
import { agentWithNumber, answeredCall } from "./support/telephony.js";

// Mallory holds a valid key of her own and Alice's ids. Every route must answer her 404, exactly
// as if the ids did not exist, and change nothing of Alice's.
let service: TestService;
let alice: Api;
let mallory: Api;
let ids: { agentId: string; numberId: string; phoneNumber: string; callId: string; turnId: string; conversationId: string; mallorysAgent: string };

beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000" } });
  alice = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
  mallory = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
  const { agentId, numberId, phoneNumber } = await agentWithNumber(alice);
  const callId = await answeredCall(alice, agentId);
  const turnId = (await alice.post(`/v1/sandbox/calls/${callId}/say`, { text: "secret" })).body.turn_id;
  await alice.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550199", text: "private" });
  const conversationId = (await alice.get("/v1/messages/conversations")).body.data[0].conversation_id;
  const mallorysAgent = (await mallory.post("/v1/agents", { name: "Mallory" })).body.agent_id;
  ids = { agentId, numberId, phoneNumber, callId, turnId, conversationId, mallorysAgent };
});
afterAll(() => service?.stop());

describe("another account's ids answer 404", () => {
  const attempts: Array<[string, () => Promise<{ status: number }>]> = [
    ["get number", () => mallory.get(`/v1/numbers/${ids.numberId}`)],
    ["reassign number to own agent", () => mallory.patch(`/v1/numbers/${ids.numberId}/reassign`, undefined, { query: { agent_id: ids.mallorysAgent } })],
    ["reassign own-looking number to their agent", () => mallory.patch(`/v1/numbers/${ids.numberId}/reassign`, undefined, { query: { agent_id: ids.agentId } })],
    ["release number", () => mallory.post(`/v1/numbers/${ids.numberId}/release`)],
    ["buy a number for their agent", () => mallory.post("/v1/numbers", { agent_id: ids.agentId })],
    ["attach a number to their agent", () => mallory.post("/v1/numbers/attach", undefined, { query: { phone_number: "+4915199999999", agent_id: ids.agentId } })],
    ["list numbers of their agent", () => mallory.get("/v1/numbers", { query: { agent_id: ids.agentId } })],
    ["call from their agent", () => mallory.post("/v1/calls", { agent_id: ids.agentId, to_number: "+14155550142" })],
    ["list calls of their agent", () => mallory.get("/v1/calls", { query: { agent_id: ids.agentId } })],
    ["get call", () => mallory.get(`/v1/calls/${ids.callId}`)],
    ["read transcript", () => mallory.get(`/v1/calls/${ids.callId}/transcript`)],
    ["hang up", () => mallory.post(`/v1/calls/${ids.callId}/hangup`)],
    ["push context", () => mallory.post(`/v1/calls/${ids.callId}/context`, { text: "hijack" }, { query: { turn_id: ids.turnId } })],
    ["read messages of their agent", () => mallory.get("/v1/messages", { query: { agent_id: ids.agentId } })],
    ["read their thread", () => mallory.get("/v1/messages", { query: { conversation_id: ids.conversationId } })],
    ["list their conversations", () => mallory.get("/v1/messages/conversations", { query: { agent_id: ids.agentId } })],
    ["poll their events", () => mallory.get("/v1/events", { query: { agent_id: ids.agentId } })],
    ["peek their events", () => mallory.get("/v1/events/peek", { query: { agent_id: ids.agentId } })],
    ["sandbox: ring their number", () => mallory.post("/v1/sandbox/inbound/calls", { to_number: ids.phoneNumber, from_number: "+14155550198" })],
    ["sandbox: speak on their call", () => mallory.post(`/v1/sandbox/calls/${ids.callId}/say`, { text: "hi" })],
    ["sandbox: hang up their call", () => mallory.post(`/v1/sandbox/calls/${ids.callId}/hangup`)],
    ["sandbox: text their number", () => mallory.post("/v1/sandbox/inbound/sms", { to_number: ids.phoneNumber, from_number: "+14155550198", text: "hi" })],
  ];

  it.each(attempts)("%s", async (_label, attempt) => {
    const res = await attempt();
    expect(res.status).toBe(404);
  });

  it("left everything of Alice's as it was", async () => {
    expect((await alice.get(`/v1/numbers/${ids.numberId}`)).body).toMatchObject({ status: "active", agent_id: ids.agentId });
    expect((await alice.get(`/v1/calls/${ids.callId}`)).body.status).toBe("in-progress");
    expect((await alice.get(`/v1/calls/${ids.callId}/transcript`)).body.map((l: any) => l.text)).toEqual(["secret"]);
    expect((await alice.get("/v1/events/peek", { query: { agent_id: ids.agentId } })).body.data.map((e: any) => e.event_type)).toEqual(["call.utterance", "sms.received"]);
    expect((await alice.get("/v1/messages")).body.data).toHaveLength(1);
    expect((await alice.post(`/v1/calls/${ids.callId}/context`, { text: "mine" }, { query: { turn_id: ids.turnId } })).status).toBe(200);
  });
});
