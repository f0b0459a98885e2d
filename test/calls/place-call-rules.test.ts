import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CarrierUnavailable } from "../../core/carrier/carrier.js";
import { listCalls } from "../../core/calls/read-calls.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber, answeredCall, drainEvents } from "../support/telephony.js";

// Placing and finding calls (core/calls/place-call.ts, calls.ts, call-records.ts): the ids calls
// get, the 404s that say what was not found, and what is left when the carrier fails while placing
// a call. Carrier failures are made by standing in for the carrier's placeCall (the boundary to
// Twilio) for one request; the service's own code runs as it is.
let service: TestService;
let account: TestAccount;
let api: Api;
const realPlaceCall = { fn: undefined as unknown };

beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
  realPlaceCall.fn = service.core.carrier.placeCall;
});
afterAll(() => service?.stop());
afterEach(() => {
  service.core.carrier.placeCall = realPlaceCall.fn as typeof service.core.carrier.placeCall;
});

describe("placing a call", () => {
  it("gives the call an id with the call_ prefix", async () => {
    const { agentId } = await agentWithNumber(api);
    expect(await answeredCall(api, agentId)).toMatch(/^call_[0-9a-z]{26}$/);
  });

  it("records a call the carrier failed on unexpectedly as failed by the carrier, and tells the agent", async () => {
    const { agentId } = await agentWithNumber(api);
    service.core.carrier.placeCall = async () => {
      throw new TypeError("Cannot read properties of undefined (reading 'sid')");
    };
    const res = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: "failed", ended_by: "carrier", answered_at: null, duration_seconds: 0 });
    expect((await drainEvents(api, agentId)).map((e) => [e.event_type, e.payload.call_id])).toEqual([["call.failed", res.body.call_id]]);
  });

  it("keeps a call the carrier reported on before failing to answer the request: it was placed after all", async () => {
    const { agentId } = await agentWithNumber(api);
    service.core.carrier.placeCall = async (call) => {
      await service.core.callEngine.callStatus(call.callId, "ringing");
      throw new CarrierUnavailable("Twilio did not answer creating the call (ETIMEDOUT)");
    };
    const res = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: "ringing" });
    expect((await api.get(`/v1/calls/${res.body.call_id}`)).body.status).toBe("ringing");
  });

  it("leaves no call when the carrier could not be reached and never reported on it", async () => {
    const { agentId } = await agentWithNumber(api);
    service.core.carrier.placeCall = async () => {
      throw new CarrierUnavailable("Twilio did not answer creating the call (ETIMEDOUT)");
    };
    const res = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
    expect(res.status).toBe(502);
    expect((await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data).toEqual([]);
  });
});

describe("finding calls", () => {
  it("answers 404 naming the call for an unknown call id", async () => {
    const res = await api.get("/v1/calls/call_00000000000000000000000000");
    expect(res.status).toBe(404);
    expect(res.body.detail).toBe('No call with id "call_00000000000000000000000000" exists on this account.');
  });

  it("lists the account's calls when no agent is named, and answers 404 for an agent that is not the account's", async () => {
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    const page = await listCalls(service.core, account.accountId, { limit: 100, offset: 0 });
    expect(page.data.map((c) => c.call_id)).toContain(callId);
    const stranger = await createAccount(service.core);
    await expect(listCalls(service.core, stranger.accountId, { limit: 100, offset: 0, agent_id: agentId })).rejects.toMatchObject({ code: "not_found" });
  });
});
