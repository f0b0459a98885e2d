import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadCallById } from "../../core/calls/call-records.js";
import { endCall } from "../../core/calls/end-call.js";
import { manualClock } from "../billing/support.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";

// Ending a call from the service's side (core/calls/end-call.ts): a call that ran out of money
// ends when its paid time did, not when the meter noticed; and a call that ended meanwhile is
// left as it is, the carrier not asked to drop it again.
let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000", BILLING_INTERVAL_MS: "3600000" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());
afterEach(() => {
  service.core.now = () => new Date();
});

describe("hanging a call up from the service", () => {
  it("ends it at the time given, not at the time it is recorded", async () => {
    const clock = manualClock(service.core, new Date());
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    const paidUntil = new Date(clock.now().getTime() + 30_000);
    clock.advance(45_000);
    await endCall(service.core, (await loadCallById(service.core.db, callId))!, "service", paidUntil);
    expect((await api.get(`/v1/calls/${callId}`)).body).toMatchObject({ status: "completed", ended_by: "service", ended_at: paidUntil.toISOString(), duration_seconds: 30 });
  });

  it("leaves a call that ended meanwhile as it is, without asking the carrier again", async () => {
    const { agentId } = await agentWithNumber(api);
    const callId = await answeredCall(api, agentId);
    const stale = (await loadCallById(service.core.db, callId))!;
    await api.post(`/v1/sandbox/calls/${callId}/hangup`);
    const asked: unknown[] = [];
    const realHangup = service.core.carrier.dropCall;
    service.core.carrier.dropCall = async (call) => void asked.push(call);
    try {
      await endCall(service.core, stale, "agent");
    } finally {
      service.core.carrier.dropCall = realHangup;
    }
    expect(asked).toEqual([]);
    expect((await api.get(`/v1/calls/${callId}`)).body).toMatchObject({ status: "completed", ended_by: "caller" });
  });
});
