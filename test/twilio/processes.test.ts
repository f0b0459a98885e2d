import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { readRelayTwiml } from "../../harness/twilio/relay-leg.js";
import { TwilioStandIn } from "../../harness/twilio/stand-in.js";
import { createTestDatabase } from "../support/postgres.js";
import { onPostgres } from "../support/service.js";
import { agentWithTwilioNumber, connectedTwilioCall, startTwilioService, type TwilioTestService, waitFor } from "../support/twilio/service.js";

// Two gateways on one PostgreSQL behind one Twilio account: a call's ConversationRelay socket is
// held by the gateway Twilio connected to, and whatever gateway a request lands on reaches it.
describe.runIf(onPostgres)("the Twilio carrier on several processes", () => {
  let twilio: TwilioStandIn;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let a: TwilioTestService;
  let b: TwilioTestService;
  let apiA: Api;
  let apiB: Api;

  beforeAll(async () => {
    twilio = await TwilioStandIn.start();
    database = await createTestDatabase(inject("postgresTemplate")!);
    a = await startTwilioService({}, { twilio, databaseUrl: database.url });
    b = await startTwilioService({}, { twilio, databaseUrl: database.url });
    const { apiKey } = await createAccount(a.service.core);
    apiA = new Api(a.service.baseUrl, apiKey);
    apiB = new Api(b.service.baseUrl, apiKey);
  });
  afterAll(async () => {
    await a?.service.stop();
    await b?.service.stop();
    await twilio?.close();
    await database?.drop();
    twilio?.expectValid();
  });

  it("speaks an answer pushed to one gateway into the call whose socket the other holds", async () => {
    const { agentId } = await agentWithTwilioNumber(apiA);
    const { callId, callSid, leg } = await connectedTwilioCall(apiA, twilio, agentId);
    leg.say("Which gateway am I on?");
    let turnId = "";
    await waitFor(async () => {
      const event = (await apiB.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data.find((e: any) => e.event_type === "call.utterance");
      turnId = event?.turn_id ?? "";
      return turnId !== "";
    });
    expect((await apiB.post(`/v1/calls/${callId}/context`, { text: "Either; it does not matter." }, { query: { turn_id: turnId } })).status).toBe(200);
    expect(await leg.line(0)).toBe("Either; it does not matter.");
    // Hung up on the gateway without the socket: Twilio is told through Calls update.
    expect((await apiB.post(`/v1/calls/${callId}/hangup`)).body.status).toBe("completed");
    expect(twilio.requestsOf("UpdateCall").at(-1)).toMatchObject({ params: { Sid: callSid }, form: { Status: "completed" } });
    await leg.closed;
  });

  it("plays digits and an unprompted line sent to one gateway into the call whose socket the other holds", async () => {
    const { agentId } = await agentWithTwilioNumber(apiA);
    const { callId, callSid, leg } = await connectedTwilioCall(apiA, twilio, agentId);
    expect((await apiB.post(`/v1/calls/${callId}/digits`, { digits: "3w#" })).status).toBe(200);
    expect(await leg.digitsSent(0)).toBe("3w#");
    expect((await apiB.post(`/v1/calls/${callId}/say`, { text: "Still with me?" })).status).toBe(200);
    expect(await leg.line(0)).toBe("Still with me?");
    await twilio.hangUp(callSid);
  });

  it("ends the session with handoffData for a transfer asked of the gateway without the socket", async () => {
    const { agentId } = await agentWithTwilioNumber(apiA);
    const { callId, callSid, leg } = await connectedTwilioCall(apiA, twilio, agentId);
    expect((await apiB.post(`/v1/calls/${callId}/transfer`, { to_number: "+14155557777" })).status).toBe(200);
    expect(JSON.parse((await leg.ended()).handoffData)).toMatchObject({ reason: "transfer", to: "+14155557777" });
    await waitFor(async () => (await apiB.get(`/v1/calls/${callId}`)).body.transfer_status === "bridged");
    await twilio.hangUp(callSid);
    await twilio.settled();
  });

  it("gives a voice webhook retried to both gateways at once one call", async () => {
    const { agentId, phoneNumber } = await agentWithTwilioNumber(apiA);
    const number = [...twilio.numbers.values()].find((n) => n.phoneNumber === phoneNumber)!;
    const params = {
      AccountSid: twilio.accountSid,
      ApiVersion: "2010-04-01",
      CallSid: "CA" + "7".repeat(32),
      CallStatus: "ringing",
      Direction: "inbound",
      From: "+14155550177",
      To: phoneNumber,
    };
    const answers = await Promise.all([
      twilio.post(number.voiceUrl!, params),
      twilio.post(number.voiceUrl!.replace(a.service.baseUrl, b.service.baseUrl), params),
    ]);
    const callIds = answers.map((answer) => readRelayTwiml(answer.text)?.parameters.call_id);
    expect(callIds[0]).toMatch(/^call_/);
    expect(callIds[1]).toBe(callIds[0]);
    expect((await apiA.get("/v1/calls", { query: { agent_id: agentId } })).body.data).toHaveLength(1);
  });
});
