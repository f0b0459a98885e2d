import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { agentWithTwilioNumber, connectedTwilioCall, startTwilioService, type TwilioTestService, waitFor } from "../support/twilio/service.js";

// The turn timer lives in core, but what the caller hears of it is the carrier's: on Twilio the
// filler is a `text` token on the ConversationRelay socket, spoken once, and the late answer follows.
describe("a slow answer on a Twilio call", () => {
  let env: TwilioTestService;
  let api: Api;

  beforeAll(async () => {
    env = await startTwilioService({ TURN_TIMEOUT_MS: "150", TURN_FILLER_TEXT: "Bear with me." });
    api = new Api(env.service.baseUrl, (await createAccount(env.service.core)).apiKey);
  });
  afterAll(() => env?.stop());

  it("speaks the filler once as a text token, then the late answer", async () => {
    const { agentId } = await agentWithTwilioNumber(api);
    const { callId, callSid, leg } = await connectedTwilioCall(api, env.twilio, agentId);
    leg.say("Can you check my order?");
    expect(await leg.line(0)).toBe("Bear with me.");
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(leg.lines).toEqual(["Bear with me."]);
    let turnId = "";
    await waitFor(async () => {
      const event = (await api.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data.find((e: any) => e.event_type === "call.utterance");
      turnId = event?.turn_id ?? "";
      return turnId !== "";
    });
    expect((await api.post(`/v1/calls/${callId}/context`, { text: "It shipped today." }, { query: { turn_id: turnId } })).status).toBe(200);
    expect(await leg.line(1)).toBe("It shipped today.");
    expect(leg.frames.filter((f) => f.type === "text")).toEqual([
      { type: "text", token: "Bear with me.", last: true },
      { type: "text", token: "It shipped today.", last: true },
    ]);
    await env.twilio.hangUp(callSid);
    await waitFor(async () => (await api.get(`/v1/calls/${callId}`)).body.status === "completed");
  });
});
