import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { numbers } from "../../core/db/schema/numbers.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, drainEvents } from "../support/telephony.js";
import { expectBalanceIsLedgerSum, ledgerOf, manualClock } from "./support.js";

// Default rate card: local number 1.15/month, outbound 0.015/min (250 µ$/s), inbound 0.009/min
// (150 µ$/s), received text 0.0079. The billing jobs are run by hand with a hand-moved clock.
let service: TestService;

beforeAll(async () => {
  service = await startTestService({ env: { BILLING_INTERVAL_MS: "3600000", TURN_TIMEOUT_MS: "60000" } });
});
afterAll(() => service?.stop());

async function accountWith(micros: number): Promise<{ account: TestAccount; api: Api }> {
  const account = await createAccount(service.core, undefined, { creditMicros: micros });
  return { account, api: new Api(service.baseUrl, account.apiKey) };
}

const balance = async (api: Api) => (await api.get("/v1/billing/balance")).body.balance;

describe("numbers", () => {
  it("charges the first month with the purchase, and refuses a purchase the balance cannot cover", async () => {
    const { account, api } = await accountWith(2_000_000);
    const agentId = (await api.post("/v1/agents", { name: "a" })).body.agent_id;
    expect((await api.post("/v1/numbers", { agent_id: agentId })).status).toBe(201);
    expect(await balance(api)).toBe("0.850000");
    const refused = await api.post("/v1/numbers", { agent_id: agentId });
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: "insufficient_balance", required: "1.150000", balance: "0.850000", currency: "USD" });
    expect((await api.get("/v1/numbers")).body.data).toHaveLength(1);
    const purchase = (await ledgerOf(service.core, account.accountId)).filter((r) => r.category === "number");
    expect(purchase).toEqual([expect.objectContaining({ amountMicros: -1_150_000, item: "number.purchase", quantity: 1 })]);
    await expectBalanceIsLedgerSum(service.core, account.accountId);
  });

  it("charges each type its own fee", async () => {
    const { account, api } = await accountWith(10_000_000);
    const agentId = (await api.post("/v1/agents", { name: "a" })).body.agent_id;
    await api.post("/v1/numbers", { agent_id: agentId, number_type: "toll_free" });
    await api.post("/v1/numbers", { agent_id: agentId, country: "GB", number_type: "mobile" });
    expect(await balance(api)).toBe("6.350000");
    await expectBalanceIsLedgerSum(service.core, account.accountId);
  });

  it("gives exactly 3 of 20 concurrent purchases when the money covers 3, and leaves the balance exact", async () => {
    const { account, api } = await accountWith(3 * 1_150_000 + 1_000_000);
    const agentId = (await api.post("/v1/agents", { name: "a" })).body.agent_id;
    const answers = await Promise.all(Array.from({ length: 20 }, () => api.post("/v1/numbers", { agent_id: agentId })));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(3);
    expect(answers.filter((r) => r.status === 402 && r.body.code === "insufficient_balance")).toHaveLength(17);
    expect(await balance(api)).toBe("1.000000");
    expect((await api.get("/v1/numbers")).body.data).toHaveLength(3);
    await expectBalanceIsLedgerSum(service.core, account.accountId);
  });

  it("renews monthly, and releases after the grace period a number whose renewal cannot be paid", async () => {
    const clock = manualClock(service.core);
    try {
      const { account, api } = await accountWith(1_150_000 + 1_150_000 + 500_000);
      const { agentId, numberId } = await agentWithNumber(api);
      await drainEvents(api, agentId);
      clock.advance(31 * 86_400_000);
      await service.core.billing.runOnce();
      expect(await balance(api)).toBe("0.500000");
      const [renewed] = await service.core.db.select().from(numbers).where(eq(numbers.numberId, numberId));
      expect(renewed!.paidThrough!.toISOString()).toBe("2027-01-22T10:00:00.000Z");

      clock.advance(31 * 86_400_000);
      await service.core.billing.runOnce();
      const [failed] = await drainEvents(api, agentId);
      expect(failed).toMatchObject({ event_type: "number.renewal_failed", payload: { number_id: numberId, amount: "1.150000" } });
      expect((await api.get(`/v1/numbers/${numberId}`)).body.status).toBe("active");

      clock.advance(6 * 86_400_000);
      await service.core.billing.runOnce();
      expect((await api.get(`/v1/numbers/${numberId}`)).body.status).toBe("active");
      clock.advance(2 * 86_400_000);
      await service.core.billing.runOnce();
      expect((await api.get(`/v1/numbers/${numberId}`)).body.status).toBe("released");
      expect((await drainEvents(api, agentId)).map((e) => [e.event_type, e.payload.reason])).toEqual([["number.released", "unpaid"]]);
      expect(await balance(api)).toBe("0.500000");
      await expectBalanceIsLedgerSum(service.core, account.accountId);
    } finally {
      service.core.now = () => new Date();
    }
  });
});

describe("calls", () => {
  it("refuses a call with 402 unless the balance covers its first minute", async () => {
    const { api } = await accountWith(1_150_000 + 14_999);
    const { agentId } = await agentWithNumber(api);
    const res = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ code: "insufficient_balance", required: "0.015000" });
    expect((await api.get("/v1/calls")).body.data).toEqual([]);
  });

  it("prepays talk time a block ahead and refunds what was not used: 7 s cost 7 s", async () => {
    const clock = manualClock(service.core);
    try {
      const { account, api } = await accountWith(5_000_000);
      const { agentId } = await agentWithNumber(api);
      const call = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" })).body;
      expect(call.charge).toBe("0.015000");
      expect(await balance(api)).toBe("3.835000");
      clock.advance(7_000);
      const ended = (await api.post(`/v1/calls/${call.call_id}/hangup`)).body;
      expect(ended).toMatchObject({ duration_seconds: 7, billed_seconds: 7, charge: "0.001750" });
      expect(await balance(api)).toBe("3.848250");
      const lines = (await ledgerOf(service.core, account.accountId)).filter((r) => r.callId === call.call_id);
      expect(lines.map((r) => [r.amountMicros, r.quantity])).toEqual([
        [-15_000, 60],
        [13_250, -53],
      ]);
      const completed = (await drainEvents(api, agentId)).find((e) => e.event_type === "call.completed");
      expect(completed.payload).toMatchObject({ billed_seconds: 7, charge: "0.001750", currency: "USD" });
      await expectBalanceIsLedgerSum(service.core, account.accountId);
    } finally {
      service.core.now = () => new Date();
    }
  });

  it("ends a call when the balance runs out, charging exactly the money there was", async () => {
    const clock = manualClock(service.core);
    try {
      // After the number: 0.020000 = 80 s of outbound talk.
      const { account, api } = await accountWith(1_150_000 + 20_000);
      const { agentId } = await agentWithNumber(api);
      const call = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" })).body;
      const phone = await Softphone.connect(service.baseUrl, call.call_id, account.apiKey);
      for (const seconds of [30, 56, 70, 79]) {
        clock.set(new Date(Date.parse(call.answered_at) + seconds * 1000));
        await service.core.billing.runOnce();
        expect((await api.get(`/v1/calls/${call.call_id}`)).body.status).toBe("in-progress");
      }
      expect(await balance(api)).toBe("0.000000");
      clock.set(new Date(Date.parse(call.answered_at) + 81_000));
      await service.core.billing.runOnce();
      const ended = (await api.get(`/v1/calls/${call.call_id}`)).body;
      expect(ended).toMatchObject({ status: "completed", ended_by: "service", duration_seconds: 80, billed_seconds: 80, charge: "0.020000" });
      expect(ended.ended_at).toBe(new Date(Date.parse(call.answered_at) + 80_000).toISOString());
      await phone.next((f) => f.type === "status" && f.status === "completed");
      expect(await balance(api)).toBe("0.000000");
      const verify = (await api.get(`/v1/billing/verify/${call.call_id}`)).body;
      expect(verify).toMatchObject({ agrees: true, charged: "0.020000" });
      await expectBalanceIsLedgerSum(service.core, account.accountId);
    } finally {
      service.core.now = () => new Date();
    }
  });

  it("leaves less than one second's price when the balance is not a whole number of seconds", async () => {
    const clock = manualClock(service.core);
    try {
      const { account, api } = await accountWith(1_150_000 + 15_100);
      const { agentId } = await agentWithNumber(api);
      const call = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" })).body;
      clock.set(new Date(Date.parse(call.answered_at) + 61_000));
      await service.core.billing.runOnce();
      const ended = (await api.get(`/v1/calls/${call.call_id}`)).body;
      expect(ended).toMatchObject({ status: "completed", ended_by: "service", billed_seconds: 60, charge: "0.015000" });
      expect(await balance(api)).toBe("0.000100");
      await expectBalanceIsLedgerSum(service.core, account.accountId);
    } finally {
      service.core.now = () => new Date();
    }
  });

  it("bills completed calls of several lengths exactly, and verify agrees with the ledger", async () => {
    const clock = manualClock(service.core);
    try {
      const { account, api } = await accountWith(20_000_000);
      const { agentId, phoneNumber } = await agentWithNumber(api);
      for (const [seconds, direction] of [
        [0, "outbound"],
        [1, "outbound"],
        [59, "outbound"],
        [60, "outbound"],
        [61, "inbound"],
        [125, "inbound"],
        [200, "outbound"],
      ] as const) {
        const callId =
          direction === "outbound"
            ? (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" })).body.call_id
            : (await api.post("/v1/sandbox/inbound/calls", { to_number: phoneNumber, from_number: "+14155550133" })).body.call_id;
        const answeredAt = Date.parse((await api.get(`/v1/calls/${callId}`)).body.answered_at);
        for (let t = 50; t < seconds; t += 50) {
          clock.set(new Date(answeredAt + t * 1000));
          await service.core.billing.runOnce();
        }
        clock.set(new Date(answeredAt + seconds * 1000));
        await api.post(`/v1/calls/${callId}/hangup`);
        const verify = (await api.get(`/v1/billing/verify/${callId}`)).body;
        const rate = direction === "outbound" ? 250 : 150;
        expect(verify, `${seconds} s ${direction}`).toMatchObject({ agrees: true, duration_seconds: seconds, billed_seconds: seconds });
        expect(verify.charged).toBe(verify.expected_charge);
        expect(Math.round(Number(verify.charged) * 1e6)).toBe(seconds * rate);
      }
      await expectBalanceIsLedgerSum(service.core, account.accountId);
    } finally {
      service.core.now = () => new Date();
    }
  });

  it("does not answer an inbound call the account cannot pay for", async () => {
    const { api } = await accountWith(1_150_000 + 8_999);
    const { phoneNumber } = await agentWithNumber(api);
    const res = await api.post("/v1/sandbox/inbound/calls", { to_number: phoneNumber, from_number: "+14155550133" });
    expect(res.status).toBe(402);
    expect((await api.get("/v1/calls")).body.data).toEqual([]);
  });
});

describe("texts", () => {
  it("charges each received text, and refuses one the balance cannot cover without storing it", async () => {
    const { account, api } = await accountWith(1_150_000 + 7_900 + 100);
    const { phoneNumber } = await agentWithNumber(api);
    expect((await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550171", text: "one" })).status).toBe(201);
    expect(await balance(api)).toBe("0.000100");
    const refused = await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550171", text: "two" });
    expect(refused.status).toBe(402);
    expect((await api.get("/v1/messages")).body.data.map((m: any) => m.text)).toEqual(["one"]);
    const [line] = (await ledgerOf(service.core, account.accountId)).filter((r) => r.category === "sms");
    expect(line).toMatchObject({ amountMicros: -7_900, item: "sms.inbound", quantity: 1 });
    await expectBalanceIsLedgerSum(service.core, account.accountId);
  });
});

describe("idempotency", () => {
  it("buys one number for the same Idempotency-Key twice, and answers 409 to the key with another body", async () => {
    const { account, api } = await accountWith(10_000_000);
    const agentId = (await api.post("/v1/agents", { name: "a" })).body.agent_id;
    const headers = { "idempotency-key": "buy-once-1" };
    const first = await api.post("/v1/numbers", { agent_id: agentId }, { headers });
    const again = await api.post("/v1/numbers", { agent_id: agentId }, { headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect((await api.get("/v1/numbers")).body.data).toHaveLength(1);
    expect(await balance(api)).toBe("8.850000");
    const other = await api.post("/v1/numbers", { agent_id: agentId, area_code: "212" }, { headers });
    expect(other.status).toBe(409);
    expect(other.body.code).toBe("idempotency_conflict");
    // Keys belong to an account: another account may use the same one.
    const { api: otherApi } = await accountWith(10_000_000);
    const theirs = (await otherApi.post("/v1/agents", { name: "b" })).body.agent_id;
    expect((await otherApi.post("/v1/numbers", { agent_id: theirs }, { headers })).status).toBe(201);
    await expectBalanceIsLedgerSum(service.core, account.accountId);
  });

  it("places one call for a repeated key, even when the repeats race", async () => {
    const { api } = await accountWith(10_000_000);
    const { agentId } = await agentWithNumber(api);
    const headers = { "idempotency-key": "call-once" };
    const answers = await Promise.all(Array.from({ length: 5 }, () => api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" }, { headers })));
    const ok = answers.filter((r) => r.status === 201);
    expect(new Set(ok.map((r) => r.body.call_id)).size).toBe(1);
    expect(answers.every((r) => r.status === 201 || (r.status === 409 && r.body.code === "idempotency_conflict"))).toBe(true);
    expect((await api.get("/v1/calls")).body.data).toHaveLength(1);
    const replay = await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" }, { headers });
    expect(replay.body.call_id).toBe(ok[0]!.body.call_id);
  });

  it("replays a refusal too, and rejects a malformed key", async () => {
    const { api } = await accountWith(100);
    const agentId = (await api.post("/v1/agents", { name: "a" })).body.agent_id;
    const headers = { "idempotency-key": "poor-1" };
    const refused = await api.post("/v1/numbers", { agent_id: agentId }, { headers });
    expect(refused.status).toBe(402);
    const replayed = await api.post("/v1/numbers", { agent_id: agentId }, { headers });
    expect(replayed.status).toBe(402);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    const bad = await api.post("/v1/numbers", { agent_id: agentId }, { headers: { "idempotency-key": "x".repeat(256) } });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].field).toBe("Idempotency-Key");
  });
});
