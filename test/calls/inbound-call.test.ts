import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCallById } from "../../core/calls/call-records.js";
import { CALL_STATUS_CHANNEL } from "../../core/calls/call-status.js";
import { receiveInboundCall } from "../../core/calls/inbound-call.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { ledgerOf } from "../billing/support.js";
import { coreWithBusDown } from "../support/failing-bus.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber, drainEvents } from "../support/telephony.js";

// The rules of a call arriving on a number (core/calls/inbound-call.ts), driven as the carrier
// adapters drive them, with receiveInboundCall: a carrier repeating its report gets the call it
// already has and announces nothing new; the first minute must be affordable at the inbound rate.
let service: TestService;

beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000", BILLING_INTERVAL_MS: "3600000" } });
});
afterAll(() => service?.stop());

// A local number costs 1.15 USD; inbound talk is 0.009 USD a minute, 150 µ$ a second.
const NUMBER = 1_150_000;
const INBOUND_RATE = 150;
const CALLER = "+14155550122";

async function numberOf(creditMicros?: number) {
  const account = await createAccount(service.core, undefined, creditMicros === undefined ? {} : { creditMicros: NUMBER + creditMicros });
  const api = new Api(service.baseUrl, account.apiKey);
  return { api, accountId: account.accountId, ...(await agentWithNumber(api)) };
}

/**
 * The call status announcements (what softphones and relay legs wait on) made while fn runs. On
 * PostgreSQL they travel by NOTIFY and arrive a little after the publish: hence the wait.
 */
async function announcedDuring(fn: () => Promise<unknown>) {
  const seen: Record<string, unknown>[] = [];
  const off = service.core.bus.subscribe(CALL_STATUS_CHANNEL, (message) => seen.push(message));
  try {
    await fn();
    await new Promise((r) => setTimeout(r, 300));
  } finally {
    off();
  }
  return seen;
}

describe("a call arriving", () => {
  it("is answered, announced in progress once, and told to the agent as an inbound call on its number", async () => {
    const { api, agentId, numberId, phoneNumber } = await numberOf();
    let decision: Awaited<ReturnType<typeof receiveInboundCall>> | undefined;
    const seen = await announcedDuring(async () => {
      decision = await receiveInboundCall(service.core, { to: phoneNumber, from: CALLER, carrierRef: "CA-arriving-1" });
    });
    expect(decision).toEqual({ accepted: true, callId: expect.stringMatching(/^call_/) });
    const callId = (decision as { callId: string }).callId;
    expect(seen).toEqual([{ call_id: callId, status: "in-progress" }]);
    const call = await loadCallById(service.core.db, callId);
    const [received] = await drainEvents(api, agentId);
    expect(received.payload).toEqual({
      call_id: callId,
      direction: "inbound",
      from_number: CALLER,
      to_number: phoneNumber,
      number_id: numberId,
      is_owner_call: false,
      answered_at: call!.answeredAt!.toISOString(),
    });
    // Talk time is paid at the inbound rate, not the outbound one.
    expect(call!.rateMicrosPerSecond).toBe(INBOUND_RATE);
  });

  it("reported again by the carrier: the same call, announced and told to the agent only once", async () => {
    const { api, agentId, phoneNumber } = await numberOf();
    const report = { to: phoneNumber, from: CALLER, carrierRef: "CA-repeated-1" };
    let first: Awaited<ReturnType<typeof receiveInboundCall>> | undefined;
    const seen = await announcedDuring(async () => {
      first = await receiveInboundCall(service.core, report);
      expect(await receiveInboundCall(service.core, report)).toEqual(first);
    });
    expect(seen).toEqual([{ call_id: (first as { callId: string }).callId, status: "in-progress" }]);
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).toEqual(["call.received"]);
  });

  it("reported again after its number was released: still the call it already is, not turned away", async () => {
    const { api, numberId, phoneNumber } = await numberOf();
    const report = { to: phoneNumber, from: CALLER, carrierRef: "CA-released-1" };
    const first = await receiveInboundCall(service.core, report);
    expect((await api.post(`/v1/numbers/${numberId}/release`)).status).toBe(200);
    expect(await receiveInboundCall(service.core, report)).toEqual(first);
    // A new call to the released number is not in service.
    expect(await receiveInboundCall(service.core, { ...report, carrierRef: "CA-released-2" })).toEqual({ accepted: false, reason: "not_in_service" });
  });
});

describe("a call whose announcement cannot be sent", () => {
  it("is refused whole: no call, no charge, no event; the carrier's retry of the report then answers it once", async () => {
    const { api, accountId, agentId, phoneNumber } = await numberOf();
    const ledger = await ledgerOf(service.core, accountId);
    const report = { to: phoneNumber, from: CALLER, carrierRef: "CA-bus-down-1" };
    const down = coreWithBusDown(service.core, CALL_STATUS_CHANNEL);
    await expect(receiveInboundCall(down.core, report)).rejects.toThrow("the bus cannot send");
    expect(down.attempts).toEqual([{ inTransaction: true }]);
    expect((await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data).toEqual([]);
    expect(await ledgerOf(service.core, accountId)).toEqual(ledger);
    expect(await drainEvents(api, agentId)).toEqual([]);
    const retried = await receiveInboundCall(service.core, report);
    expect(retried).toEqual({ accepted: true, callId: expect.stringMatching(/^call_/) });
    expect((await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data.map((c: { call_id: string }) => c.call_id)).toEqual([
      (retried as { callId: string }).callId,
    ]);
    expect((await drainEvents(api, agentId)).map((e) => e.event_type)).toEqual(["call.received"]);
  });
});

describe("the first minute of an inbound call", () => {
  it("is answered on a balance of exactly one minute at the inbound rate", async () => {
    const { phoneNumber } = await numberOf(INBOUND_RATE * 60);
    const decision = await receiveInboundCall(service.core, { to: phoneNumber, from: CALLER, carrierRef: "CA-exact-minute" });
    expect(decision.accepted).toBe(true);
  });

  it("is not answered on one micro-dollar less, and no call is recorded", async () => {
    const { api, agentId, phoneNumber } = await numberOf(INBOUND_RATE * 60 - 1);
    let decision: Awaited<ReturnType<typeof receiveInboundCall>> | undefined;
    const seen = await announcedDuring(async () => {
      decision = await receiveInboundCall(service.core, { to: phoneNumber, from: CALLER, carrierRef: "CA-short-minute" });
    });
    expect(decision).toEqual({ accepted: false, reason: "insufficient_balance" });
    expect(seen).toEqual([]);
    expect((await api.get("/v1/calls", { query: { agent_id: agentId } })).body.data).toEqual([]);
    expect(await drainEvents(api, agentId)).toEqual([]);
  });
});
