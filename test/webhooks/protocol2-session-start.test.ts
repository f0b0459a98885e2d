import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CallRow, loadCallById } from "../../core/calls/call-records.js";
import { briefingFor, sessionStart } from "../../core/webhooks/protocol2.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";

// The protocol-2 session start and its briefing (docs/protocol-2.md), built directly from calls
// and texts the sandbox made: the integration test (protocol2.test.ts) sees one inbound call
// with one line; these pin the edges it does not reach: an outbound call's far party, a past
// call that was never answered, a long transcript, and the numbers that are not the caller's.
let service: TestService;
let api: Api;

// The sandbox does not answer a number ending in 0002: calls to it end unanswered.
const CALLER = "+14155550002";
const SOMEONE_ELSE = "+14155550177";

beforeAll(async () => {
  service = await startTestService();
  api = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
});
afterAll(() => service?.stop());

async function callRow(callId: string): Promise<CallRow> {
  return (await loadCallById(service.core.db, callId))!;
}

async function inboundCall(agentNumber: string, from: string, lines: string[]) {
  const call = await api.post("/v1/sandbox/inbound/calls", { to_number: agentNumber, from_number: from });
  expect(call.status).toBe(201);
  for (const text of lines) expect((await api.post(`/v1/sandbox/calls/${call.body.call_id}/say`, { text })).status).toBe(201);
  await api.post(`/v1/sandbox/calls/${call.body.call_id}/hangup`);
  return call.body.call_id as string;
}

async function outboundCall(agentId: string, to: string) {
  const call = await api.post("/v1/calls", { agent_id: agentId, to_number: to });
  expect(call.status).toBe(201);
  return call.body.call_id as string;
}

describe("briefingFor", () => {
  it("for an outbound call, briefs on the number dialled: its calls both ways, newest first, and its texts only", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    const lines = ["one", "two", "three", "four", "five", "six", "seven", "eight"];
    const answered = await inboundCall(phoneNumber, CALLER, lines);
    const unanswered = await outboundCall(agentId, CALLER);
    // Calls and texts with another number are not this caller's history.
    await inboundCall(phoneNumber, SOMEONE_ELSE, ["not me"]);
    await outboundCall(agentId, SOMEONE_ELSE);
    await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: CALLER, text: "from the caller" });
    await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: SOMEONE_ELSE, text: "from someone else" });
    const current = await callRow(await outboundCall(agentId, CALLER));
    expect(current).toMatchObject({ direction: "outbound", fromNumber: phoneNumber, toNumber: CALLER });

    const briefing = await briefingFor(service.core.db, current);
    expect(briefing.caller).toEqual({ number: CALLER, is_owner: false });
    expect(briefing.recent_calls.map((c) => c.call_id)).toEqual([unanswered, answered]);
    const [missed, talked] = briefing.recent_calls;
    expect(missed).toMatchObject({ direction: "outbound", answered_at: null, last_lines: [] });
    expect(missed!.status).not.toBe("completed");
    const answeredRow = await callRow(answered);
    expect(talked).toMatchObject({
      direction: "inbound",
      status: "completed",
      answered_at: answeredRow.answeredAt!.toISOString(),
      duration_seconds: answeredRow.durationSeconds,
    });
    // The last six lines of a longer conversation, in the order spoken.
    expect(talked!.last_lines.map((l) => l.text)).toEqual(lines.slice(-6));
    expect(briefing.recent_texts.map((t) => t.text)).toEqual(["from the caller"]);
  });

  it("for an inbound call, briefs on the number calling", async () => {
    const { phoneNumber } = await agentWithNumber(api);
    const earlier = await inboundCall(phoneNumber, SOMEONE_ELSE, ["hi"]);
    const current = await callRow(await inboundCall(phoneNumber, SOMEONE_ELSE, []));
    const briefing = await briefingFor(service.core.db, current);
    expect(briefing.caller.number).toBe(SOMEONE_ELSE);
    expect(briefing.recent_calls.map((c) => c.call_id)).toEqual([earlier]);
  });
});

describe("sessionStart", () => {
  it("dates an answered call's session by its answer", async () => {
    const { agentId } = await agentWithNumber(api);
    const call = await callRow(await outboundCall(agentId, "+14155550142"));
    const start = await sessionStart(service.core.db, "msg_answered", call, false, "sk_1");
    expect(call.answeredAt).toBeInstanceOf(Date);
    expect(start.body).toMatchObject({
      id: "msg_answered",
      created_at: call.answeredAt!.toISOString(),
      answered_at: call.answeredAt!.toISOString(),
      session_key: "sk_1",
    });
    expect(start.body).not.toHaveProperty("briefing");
  });

  it("dates a session of a call not answered yet by now, with no answered_at", async () => {
    const { agentId } = await agentWithNumber(api);
    const call = await callRow(await outboundCall(agentId, CALLER));
    expect(call.answeredAt).toBeNull();
    const before = Date.now();
    const start = await sessionStart(service.core.db, "msg_ringing", call, true, "sk_2");
    expect(start.body.answered_at).toBeNull();
    expect(Date.parse(start.body.created_at as string)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(start.body.created_at as string)).toBeLessThanOrEqual(Date.now());
    expect(start.body.briefing).toMatchObject({ caller: { number: CALLER } });
  });
});
