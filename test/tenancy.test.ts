import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../harness/accounts.js";
import { Api } from "../harness/api.js";
import { RelayLeg } from "../harness/twilio/relay-leg.js";
import { startTestService, type TestService } from "./support/service.js";
import { agentWithNumber, answeredCall } from "./support/telephony.js";
import { agentWithTwilioNumber, connectedTwilioCall, startTwilioService, type TwilioTestService, waitFor } from "./support/twilio/service.js";

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
    [
      "reassign own-looking number to their agent",
      () => mallory.patch(`/v1/numbers/${ids.numberId}/reassign`, undefined, { query: { agent_id: ids.agentId } }),
    ],
    ["release number", () => mallory.post(`/v1/numbers/${ids.numberId}/release`)],
    ["buy a number for their agent", () => mallory.post("/v1/numbers", { agent_id: ids.agentId })],
    [
      "attach a number to their agent",
      () => mallory.post("/v1/numbers/attach", undefined, { query: { phone_number: "+4915199999999", agent_id: ids.agentId } }),
    ],
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
    expect((await alice.get("/v1/events/peek", { query: { agent_id: ids.agentId } })).body.data.map((e: any) => e.event_type)).toEqual([
      "call.utterance",
      "sms.received",
    ]);
    expect((await alice.get("/v1/messages")).body.data).toHaveLength(1);
    expect((await alice.post(`/v1/calls/${ids.callId}/context`, { text: "mine" }, { query: { turn_id: ids.turnId } })).status).toBe(200);
  });
});

// On Twilio, a call is reached by ids Twilio signed: a report or a socket that names one call
// can never act on another account's call, even when it is genuinely from Twilio.
describe("Twilio: one call's carrier ids never reach another call", () => {
  let env: TwilioTestService;
  let alices: Api;
  let mallorys: Api;
  let alice: { agentId: string; callId: string; callSid: string; leg: RelayLeg };
  let mallory: { agentId: string; callId: string; callSid: string; leg: RelayLeg };

  beforeAll(async () => {
    env = await startTwilioService();
    alices = new Api(env.service.baseUrl, (await createAccount(env.service.core)).apiKey);
    mallorys = new Api(env.service.baseUrl, (await createAccount(env.service.core)).apiKey);
    const a = (await agentWithTwilioNumber(alices)).agentId;
    alice = { agentId: a, ...(await connectedTwilioCall(alices, env.twilio, a)) };
    const m = (await agentWithTwilioNumber(mallorys)).agentId;
    mallory = { agentId: m, ...(await connectedTwilioCall(mallorys, env.twilio, m, "+14155550143")) };
  });
  afterAll(() => env?.stop());

  it("answers Mallory 404 on Alice's Twilio call", async () => {
    for (const res of [
      await mallorys.get(`/v1/calls/${alice.callId}`),
      await mallorys.post(`/v1/calls/${alice.callId}/hangup`),
      await mallorys.get(`/v1/calls/${alice.callId}/transcript`),
    ])
      expect(res.status).toBe(404);
    expect((await alices.get(`/v1/calls/${alice.callId}`)).body.status).toBe("in-progress");
  });

  it("ignores a status callback naming Alice's call with Mallory's CallSid", async () => {
    const forged = { ...env.twilio.calls.get(mallory.callSid)!, statusCallback: `${env.service.baseUrl}/twilio/status?call_id=${alice.callId}` };
    expect((await env.twilio.statusCallback(forged, "completed")).status).toBe(204);
    expect((await alices.get(`/v1/calls/${alice.callId}`)).body.status).toBe("in-progress");
    expect((await mallorys.get(`/v1/calls/${mallory.callId}`)).body.status).toBe("in-progress");
  });

  it("closes a relay socket of Alice's call whose setup names Mallory's call, and takes no turn from it", async () => {
    const url = `${env.service.baseUrl.replace(/^http/, "ws")}/twilio/relay/${alice.callId}`;
    const leg = await RelayLeg.connect(url, env.twilio.authToken);
    leg.setup({
      callSid: mallory.callSid,
      accountSid: env.twilio.accountSid,
      from: "+1",
      to: "+1",
      direction: "outbound-api",
      parameters: { call_id: mallory.callId },
    });
    expect((await leg.closed).code).toBe(1008);
    alice.leg.say("Only Alice's caller speaks here");
    await waitFor(async () => (await alices.get(`/v1/calls/${alice.callId}/transcript`)).body.length === 1);
    expect((await mallorys.get(`/v1/calls/${mallory.callId}/transcript`)).body).toEqual([]);
  });
});
