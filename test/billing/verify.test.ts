import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { calls } from "../../core/db/schema/calls.js";
import { newId } from "../../core/ids.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { ledgerOf, money, sumAmounts } from "./seed.js";

// 0.015 USD a minute: 250 micro-USD a second.
const RATE = 250;

let service: TestService;
let alice: Awaited<ReturnType<typeof newAccount>>;
let mallory: Awaited<ReturnType<typeof newAccount>>;

async function newAccount() {
  const account = await createAccount(service.core);
  const api = new Api(service.baseUrl, account.apiKey);
  const agentId = (await api.post("/v1/agents", { name: "Biller" })).body.agent_id as string;
  const ledger = ledgerOf(service.core, account.accountId);
  await ledger.credit("topup", 10_000_000, "2030-03-01T00:00:00Z");
  return { ...account, api, agentId, ledger };
}

beforeAll(async () => {
  service = await startTestService();
  alice = await newAccount();
  mallory = await newAccount();
});
afterAll(() => service?.stop());

type CallInsert = typeof calls.$inferInsert;

/** A call row as the charging code would leave it; the test writes its ledger rows itself. */
async function insertCall(owner: typeof alice, overrides: Partial<CallInsert> = {}): Promise<string> {
  const callId = newId("call");
  await service.core.db.insert(calls).values({
    callId,
    accountId: owner.accountId,
    agentId: owner.agentId,
    direction: "outbound",
    fromNumber: "+14155550100",
    toNumber: "+14155550142",
    status: "completed",
    voiceId: "mark",
    endedBy: "agent",
    answeredAt: new Date("2030-03-04T12:00:00Z"),
    endedAt: new Date("2030-03-04T12:00:45Z"),
    durationSeconds: 45,
    rateMicrosPerSecond: RATE,
    // Far ahead, so the metering job never takes a live test call for one of its own.
    paidUntil: new Date("2099-01-01T00:00:00Z"),
    chargedMicros: 45 * RATE,
    billedSeconds: 45,
    ...overrides,
  });
  return callId;
}

const outbound = (callId: string) => ({ category: "call" as const, item: "call.outbound" as const, callId });

/** The first minute prepaid at answer, the 15 unused seconds refunded at the end: 45 s net. */
async function chargeFortyFiveSeconds(owner: typeof alice, callId: string) {
  await owner.ledger.charge({ ...outbound(callId), quantity: 60, description: "Call time, first minute" }, 60 * RATE, "2030-03-04T12:00:00Z");
  await owner.ledger.refund({ ...outbound(callId), quantity: -15, description: "Unused call time" }, 15 * RATE, "2030-03-04T12:00:45Z");
}

async function ledgerNet(owner: typeof alice, callId: string) {
  return -sumAmounts((await owner.ledger.rows()).filter((r) => r.callId === callId));
}

describe("GET /v1/billing/verify/{call_id}", () => {
  it("agrees for an ended call whose rows add up to billed seconds × rate, and shows every row oldest first", async () => {
    const callId = await insertCall(alice);
    await chargeFortyFiveSeconds(alice, callId);
    const res = await alice.api.get(`/v1/billing/verify/${callId}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      call_id: callId,
      status: "completed",
      direction: "outbound",
      answered_at: "2030-03-04T12:00:00.000Z",
      ended_at: "2030-03-04T12:00:45.000Z",
      duration_seconds: 45,
      billed_seconds: 45,
      currency: "USD",
      rate_per_minute: "0.015000",
      rate_per_second: "0.000250",
      expected_charge: "0.011250",
      charged: "0.011250",
      agrees: true,
    });
    expect(res.body.charged).toBe(money(await ledgerNet(alice, callId)));
    expect(res.body.ledger).toEqual([
      {
        transaction_id: expect.any(String),
        amount: "-0.015000",
        category: "call",
        item: "call.outbound",
        quantity: 60,
        description: "Call time, first minute",
        created_at: "2030-03-04T12:00:00.000Z",
      },
      {
        transaction_id: expect.any(String),
        amount: "0.003750",
        category: "call",
        item: "call.outbound",
        quantity: -15,
        description: "Unused call time",
        created_at: "2030-03-04T12:00:45.000Z",
      },
    ]);
  });

  it("disagrees when an extra row was charged", async () => {
    const callId = await insertCall(alice);
    await chargeFortyFiveSeconds(alice, callId);
    expect((await alice.api.get(`/v1/billing/verify/${callId}`)).body.agrees).toBe(true);
    await alice.ledger.charge({ ...outbound(callId), quantity: 1 }, RATE, "2030-03-04T12:01:00Z");
    const res = await alice.api.get(`/v1/billing/verify/${callId}`);
    expect(res.body).toMatchObject({ expected_charge: "0.011250", charged: "0.011500", agrees: false });
    expect(res.body.charged).toBe(money(await ledgerNet(alice, callId)));
    expect(res.body.ledger).toHaveLength(3);
  });

  it("disagrees when a row is missing (the refund never written)", async () => {
    const callId = await insertCall(alice);
    await alice.ledger.charge({ ...outbound(callId), quantity: 60 }, 60 * RATE, "2030-03-04T12:00:00Z");
    const res = await alice.api.get(`/v1/billing/verify/${callId}`);
    expect(res.body).toMatchObject({ expected_charge: "0.011250", charged: "0.015000", agrees: false });
  });

  it("disagrees when the rows and the running total agree with each other but not with billed seconds × rate", async () => {
    // The refund was never written, and the running total was left at the prepaid block too.
    const callId = await insertCall(alice, { chargedMicros: 60 * RATE });
    await alice.ledger.charge({ ...outbound(callId), quantity: 60 }, 60 * RATE, "2030-03-04T12:00:00Z");
    const res = await alice.api.get(`/v1/billing/verify/${callId}`);
    expect(res.body).toMatchObject({ expected_charge: "0.011250", charged: "0.015000", agrees: false });
  });

  it("disagrees when the call's running total differs from its rows, even if the rows match the rate", async () => {
    const callId = await insertCall(alice, { chargedMicros: 60 * RATE });
    await chargeFortyFiveSeconds(alice, callId);
    const res = await alice.api.get(`/v1/billing/verify/${callId}`);
    expect(res.body).toMatchObject({ expected_charge: "0.011250", charged: "0.011250", agrees: false });
  });

  it("for a live call: no expected charge yet, and agrees while the running total matches the rows so far", async () => {
    const live = { status: "in-progress" as const, endedAt: null, durationSeconds: null, billedSeconds: null, endedBy: null, chargedMicros: 60 * RATE };
    const callId = await insertCall(alice, live);
    await alice.ledger.charge({ ...outbound(callId), quantity: 60 }, 60 * RATE, "2030-03-04T12:00:00Z");
    const res = await alice.api.get(`/v1/billing/verify/${callId}`);
    expect(res.body).toMatchObject({ status: "in-progress", ended_at: null, billed_seconds: null, expected_charge: null, charged: "0.015000", agrees: true });
    const behind = await insertCall(alice, { ...live, chargedMicros: 0 });
    await alice.ledger.charge({ ...outbound(behind), quantity: 60 }, 60 * RATE, "2030-03-04T12:00:00Z");
    expect((await alice.api.get(`/v1/billing/verify/${behind}`)).body).toMatchObject({ expected_charge: null, agrees: false });
  });

  it("agrees for a call that never connected and was never charged", async () => {
    const callId = await insertCall(alice, { status: "busy", answeredAt: null, durationSeconds: 0, billedSeconds: 0, chargedMicros: 0, endedBy: "carrier" });
    const res = await alice.api.get(`/v1/billing/verify/${callId}`);
    expect(res.body).toMatchObject({ status: "busy", expected_charge: "0.000000", charged: "0.000000", ledger: [], agrees: true });
  });

  it("counts only the account's own rows: rows another account wrote under the same call id do not count", async () => {
    const callId = await insertCall(alice);
    await chargeFortyFiveSeconds(alice, callId);
    await mallory.ledger.charge({ ...outbound(callId), quantity: 60 }, 60 * RATE, "2030-03-04T12:00:10Z");
    const res = await alice.api.get(`/v1/billing/verify/${callId}`);
    expect(res.body).toMatchObject({ charged: "0.011250", agrees: true });
    expect(res.body.ledger).toHaveLength(2);
  });

  it("answers 404 for another account's call and for a missing one, alike", async () => {
    const callId = await insertCall(alice);
    const foreign = await mallory.api.get(`/v1/billing/verify/${callId}`);
    const missing = await mallory.api.get("/v1/billing/verify/call_00000000000000000000000000");
    for (const res of [foreign, missing]) {
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("not_found");
    }
    expect(foreign.body.detail).toBe(missing.body.detail.replace("call_00000000000000000000000000", callId));
  });

  it("answers 401 without a key", async () => {
    const res = await alice.api.get("/v1/billing/verify/call_00000000000000000000000000", { key: null });
    expect(res.status).toBe(401);
  });
});
