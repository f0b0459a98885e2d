import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall, drainEvents } from "../support/telephony.js";
import { transcriptLines } from "../support/turns.js";

// Keypad digits (core/calls/send-digits.ts), end to end through the sandbox softphone, which
// hears them as `{type:"digits"}`: not billed, not in the transcript; refused outside 0-9*#w or
// over 32 (422 naming digits), on an ended call (410), a ringing one (409), another account's
// (404), each refusal sending nothing and changing nothing.
let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());

async function liveCall() {
  const { agentId } = await agentWithNumber(api);
  const callId = await answeredCall(api, agentId);
  const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
  await phone.next((f) => f.type === "status");
  return { agentId, callId, phone };
}

const digitsHeard = (phone: Softphone) => phone.frames.filter((f) => f.type === "digits");
const balance = async () => (await api.get("/v1/billing/balance")).body.balance;

describe("sending digits", () => {
  it("plays them to the far party, in order, with pauses; no transcript line, no event, no charge beyond talk time", async () => {
    const { agentId, callId, phone } = await liveCall();
    await drainEvents(api, agentId);
    const transactions = (await api.get("/v1/usage/transactions", { query: { limit: 100 } })).body.data.length;
    const sent = await api.post(`/v1/calls/${callId}/digits`, { digits: "1w2" });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ call_id: callId, digits: "1w2" });
    expect(await phone.next((f) => f.type === "digits")).toEqual({ type: "digits", digits: "1w2" });
    expect((await api.post(`/v1/calls/${callId}/digits`, { digits: "*0#" })).status).toBe(200);
    await phone.next((f) => f.type === "digits" && f.digits === "*0#");
    expect(digitsHeard(phone).map((f) => f.digits)).toEqual(["1w2", "*0#"]);
    expect(await transcriptLines(api, callId)).toEqual([]);
    expect(await drainEvents(api, agentId)).toEqual([]);
    expect((await api.get("/v1/usage/transactions", { query: { limit: 100 } })).body.data.length).toBe(transactions);
    await phone.close();
  });

  it("takes 32 keys, and every key there is", async () => {
    const { callId, phone } = await liveCall();
    const all = "0123456789*#w".padEnd(32, "9");
    expect((await api.post(`/v1/calls/${callId}/digits`, { digits: all })).status).toBe(200);
    expect(await phone.next((f) => f.type === "digits")).toEqual({ type: "digits", digits: all });
    await phone.close();
  });
});

describe("digits refused", () => {
  it.each([
    ["a letter", "12a"],
    ["an upper-case W", "1W2"],
    ["A-D (not sent, only heard)", "A"],
    ["a space", "1 2"],
    ["nothing", ""],
    ["33 keys", "1".repeat(33)],
  ])("with %s: 422 naming digits, nothing sent", async (_what, digits) => {
    const { callId, phone } = await liveCall();
    const before = await balance();
    const refused = await api.post(`/v1/calls/${callId}/digits`, { digits });
    expect(refused.status).toBe(422);
    expect(refused.body.errors.map((e: any) => e.field)).toEqual(["digits"]);
    await new Promise((r) => setTimeout(r, 100));
    expect(digitsHeard(phone)).toEqual([]);
    expect(await balance()).toBe(before);
    await phone.close();
  });

  it("with a number instead of a string, or extra fields: 422", async () => {
    const { callId } = await liveCall();
    const refused = await api.post(`/v1/calls/${callId}/digits`, { digits: 12, tone: "long" });
    expect(refused.status).toBe(422);
    expect(refused.body.errors.map((e: any) => e.field).sort()).toEqual(["digits", "tone"]);
  });

  it("on an ended call: 410 call_ended", async () => {
    const { callId, phone } = await liveCall();
    await api.post(`/v1/calls/${callId}/hangup`);
    await phone.closed;
    const refused = await api.post(`/v1/calls/${callId}/digits`, { digits: "1" });
    expect(refused.status).toBe(410);
    expect(refused.body.code).toBe("call_ended");
    expect(refused.body.detail).toBe(`Call ${callId} has ended (completed); keypad tones cannot reach it.`);
    expect((await api.get(`/v1/calls/${callId}`)).body.status).toBe("completed");
  });

  it("on a ringing call: 409 call_not_in_progress, nothing sent", async () => {
    const { agentId } = await agentWithNumber(api);
    const ringing = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550005" })).body;
    const phone = await Softphone.connect(service.baseUrl, ringing.call_id, account.apiKey);
    const refused = await api.post(`/v1/calls/${ringing.call_id}/digits`, { digits: "1" });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("call_not_in_progress");
    expect(refused.body.detail).toContain("keypad tones needs a connected call");
    await new Promise((r) => setTimeout(r, 100));
    expect(digitsHeard(phone)).toEqual([]);
    await api.post(`/v1/calls/${ringing.call_id}/hangup`);
    await phone.closed;
  });

  it("for another account's call: 404, nothing sent", async () => {
    const { callId, phone } = await liveCall();
    const mallory = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
    expect((await mallory.post(`/v1/calls/${callId}/digits`, { digits: "9" })).status).toBe(404);
    await new Promise((r) => setTimeout(r, 100));
    expect(digitsHeard(phone)).toEqual([]);
    await phone.close();
  });
});
