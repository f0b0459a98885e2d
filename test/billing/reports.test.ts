import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { presentRateCard } from "../../core/billing/rate-card.js";
import { numbers } from "../../core/db/schema/numbers.js";
import { newId } from "../../core/ids.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { expenditureOf, type LedgerRow, ledgerOf, money, ofCategory, sumAmounts, sumQuantity, within } from "./seed.js";

// The clock stands at a Wednesday afternoon; the week began on Monday 2030-03-11.
const NOW = "2030-03-13T15:00:00.000Z";

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());
afterEach(() => {
  service.core.now = () => new Date();
});

function freeze(at = NOW) {
  service.core.now = () => new Date(at);
}

async function newAccount() {
  const account = await createAccount(service.core);
  return { ...account, api: new Api(service.baseUrl, account.apiKey), ledger: ledgerOf(service.core, account.accountId) };
}

describe("reports over a seeded ledger", () => {
  let alice: Awaited<ReturnType<typeof newAccount>>;
  let mallory: Awaited<ReturnType<typeof newAccount>>;
  const call1 = newId("call");
  const call2 = newId("call");
  const call3 = newId("call");
  const num1 = newId("num");
  const num2 = newId("num");

  beforeAll(async () => {
    alice = await newAccount();
    mallory = await newAccount();
    await service.core.db.insert(numbers).values({
      numberId: num1,
      accountId: alice.accountId,
      phoneNumber: "+447700900123",
      country: "GB",
      numberType: "mobile",
      source: "attached",
    });
    const l = alice.ledger;
    const out = (callId: string) => ({ category: "call" as const, item: "call.outbound" as const, callId });
    // Written in time order, as the service writes them, so balance_after runs in order too.
    await l.credit("topup", 50_000_000, "2029-12-20T10:00:00Z");
    await l.charge({ category: "number", item: "number.purchase", numberId: num1, quantity: 1 }, 1_150_000, "2030-02-02T09:00:00Z");
    // call3 straddles the start of March: only its March rows count in March.
    await l.charge({ ...out(call3), quantity: 60 }, 15_000, "2030-02-28T23:59:30Z");
    await l.charge({ ...out(call3), quantity: 60 }, 15_000, "2030-03-01T00:00:30Z");
    await l.refund({ ...out(call3), quantity: -30 }, 7_500, "2030-03-01T00:01:00Z");
    await l.credit("signup_credit", 500_000, "2030-03-01T08:00:00Z");
    await l.charge({ category: "number", item: "number.renewal", numberId: num1, quantity: 1 }, 1_150_000, "2030-03-02T09:00:00Z");
    await l.credit("topup", 5_000_000, "2030-03-02T10:00:00Z");
    await l.credit("operator_credit", 1_000_000, "2030-03-03T10:00:00Z");
    await l.charge({ ...out(call1), quantity: 60 }, 15_000, "2030-03-04T12:00:00Z");
    await l.refund({ ...out(call1), quantity: -15 }, 3_750, "2030-03-04T12:00:45Z");
    await l.charge({ category: "call", item: "call.inbound", callId: call2, quantity: 60 }, 9_000, "2030-03-05T12:00:00Z");
    await l.charge({ category: "sms", item: "sms.inbound", messageId: newId("msg"), quantity: 1 }, 7_900, "2030-03-06T12:00:00Z");
    // A number id with no row in numbers (say, a number the account no longer has).
    await l.charge({ category: "number", item: "number.purchase", numberId: num2, quantity: 1 }, 2_150_000, "2030-03-07T12:00:00Z");
    await l.charge({ category: "sms", item: "sms.inbound", messageId: newId("msg"), quantity: 1 }, 7_900, "2030-03-12T12:00:00Z");
    // Mallory's rows name Alice's number and call: they must show in neither account's reports as Alice's.
    await mallory.ledger.credit("topup", 5_000_000, "2030-03-08T00:00:00Z");
    await mallory.ledger.charge({ category: "number", item: "number.renewal", numberId: num1, quantity: 1 }, 1_000_000, "2030-03-08T12:00:00Z");
    await mallory.ledger.charge({ ...out(call1), quantity: 60 }, 15_000, "2030-03-08T12:00:00Z");
  });

  it("balance is the sum of the ledger, with the rate card", async () => {
    const { body } = await alice.api.get("/v1/billing/balance");
    const rows = await alice.ledger.rows();
    expect(body).toEqual({ balance: money(sumAmounts(rows)), currency: "USD", rate_card: presentRateCard(service.core.config) });
  });

  it("expenditure for the month to date: spend and credits by category, equal to the sums of the raw rows", async () => {
    freeze();
    const res = await alice.api.get("/v1/billing/expenditure", { query: { period: "month" } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      period: { start: "2030-03-01T00:00:00.000Z", end: NOW, label: "2030-03" },
      currency: "USD",
      total_spend: "3.343550",
      by_category: { numbers: "3.300000", calls: "0.027750", sms: "0.015800" },
      credits: { total: "6.500000", by_category: { signup_credit: "0.500000", operator_credit: "1.000000", topup: "5.000000" } },
    });
    expect(res.body).toMatchObject(expenditureOf(within(await alice.ledger.rows(), "2030-03-01", NOW, true)));
    // No period means the month.
    expect((await alice.api.get("/v1/billing/expenditure")).body).toEqual(res.body);
  });

  it("expenditure over the year and over an explicit range agrees with the raw rows", async () => {
    freeze();
    const rows = await alice.ledger.rows();
    const year = await alice.api.get("/v1/billing/expenditure", { query: { period: "year" } });
    expect(year.body).toMatchObject({
      period: { start: "2030-01-01T00:00:00.000Z", end: NOW, label: "2030" },
      ...expenditureOf(within(rows, "2030-01-01", NOW, true)),
    });
    const december = await alice.api.get("/v1/billing/expenditure", { query: { from: "2029-12-01", to: "2030-01-01" } });
    expect(december.body).toMatchObject({ total_spend: "0.000000", credits: { total: "50.000000" } });
    expect(december.body).toMatchObject(expenditureOf(within(rows, "2029-12-01", "2030-01-01")));
  });

  it("lists per-call spend in the period, newest first, only the period's rows of a call that straddles it", async () => {
    freeze();
    const rows = await alice.ledger.rows();
    const { body } = await alice.api.get("/v1/billing/expenditure/calls");
    expect(body).toEqual({
      data: [
        {
          call_id: call2,
          direction: "inbound",
          spend: "0.009000",
          billed_seconds: 60,
          first_charged_at: "2030-03-05T12:00:00.000Z",
          last_charged_at: "2030-03-05T12:00:00.000Z",
        },
        {
          call_id: call1,
          direction: "outbound",
          spend: "0.011250",
          billed_seconds: 45,
          first_charged_at: "2030-03-04T12:00:00.000Z",
          last_charged_at: "2030-03-04T12:00:45.000Z",
        },
        {
          call_id: call3,
          direction: "outbound",
          spend: "0.007500",
          billed_seconds: 30,
          first_charged_at: "2030-03-01T00:00:30.000Z",
          last_charged_at: "2030-03-01T00:01:00.000Z",
        },
      ],
      limit: 20,
      offset: 0,
      has_more: false,
    });
    const march = within(ofCategory(rows, "call"), "2030-03-01", NOW, true);
    for (const item of body.data) {
      const mine = march.filter((r) => r.callId === item.call_id);
      expect(item.spend).toBe(money(-sumAmounts(mine)));
      expect(item.billed_seconds).toBe(sumQuantity(mine));
    }
    const year = await alice.api.get("/v1/billing/expenditure/calls", { query: { period: "year" } });
    expect(year.body.data.find((c: any) => c.call_id === call3)).toMatchObject({
      spend: "0.022500",
      billed_seconds: 90,
      first_charged_at: "2030-02-28T23:59:30.000Z",
    });
  });

  it("pages per-call spend with limit and offset", async () => {
    freeze();
    const first = await alice.api.get("/v1/billing/expenditure/calls", { query: { limit: 2 } });
    expect(first.body).toMatchObject({ limit: 2, offset: 0, has_more: true });
    expect(first.body.data.map((c: any) => c.call_id)).toEqual([call2, call1]);
    const second = await alice.api.get("/v1/billing/expenditure/calls", { query: { limit: 2, offset: 2 } });
    expect(second.body).toMatchObject({ limit: 2, offset: 2, has_more: false });
    expect(second.body.data.map((c: any) => c.call_id)).toEqual([call3]);
    expect((await alice.api.get("/v1/billing/expenditure/calls", { query: { offset: 3 } })).body.data).toEqual([]);
  });

  it("lists per-number spend with the phone number when the account has it", async () => {
    freeze();
    const month = await alice.api.get("/v1/billing/expenditure/numbers");
    expect(month.body.data).toEqual([
      { number_id: num2, phone_number: null, spend: "2.150000", months: 1, purchases: 1, renewals: 0 },
      { number_id: num1, phone_number: "+447700900123", spend: "1.150000", months: 1, purchases: 0, renewals: 1 },
    ]);
    const year = await alice.api.get("/v1/billing/expenditure/numbers", { query: { period: "year", limit: 1, offset: 1 } });
    expect(year.body).toEqual({
      data: [{ number_id: num1, phone_number: "+447700900123", spend: "2.300000", months: 2, purchases: 1, renewals: 1 }],
      limit: 1,
      offset: 1,
      has_more: false,
    });
    const rows = within(ofCategory(await alice.ledger.rows(), "number"), "2030-01-01", NOW, true).filter((r) => r.numberId === num1);
    expect(year.body.data[0]).toMatchObject({ spend: money(-sumAmounts(rows)), months: sumQuantity(rows) });
  });

  it("counts usage from the ledger: distinct calls, seconds net of refunds, texts, numbers", async () => {
    freeze();
    const { body } = await alice.api.get("/v1/usage");
    expect(body).toEqual({
      period: { start: "2030-03-01T00:00:00.000Z", end: NOW, label: "2030-03" },
      calls: { count: 3, inbound: 1, outbound: 2, billed_seconds: 135, billed_minutes: 2.25 },
      sms: { received: 2, sent_segments: 0 },
      numbers: { purchased: 1, renewed: 1 },
    });
    const march = within(await alice.ledger.rows(), "2030-03-01", NOW, true);
    const calls = ofCategory(march, "call");
    expect(body.calls.count).toBe(new Set(calls.map((r) => r.callId)).size);
    expect(body.calls.billed_seconds).toBe(sumQuantity(calls));
    expect(body.sms.received).toBe(sumQuantity(ofCategory(march, "sms")));
    const today = await alice.api.get("/v1/usage", { query: { period: "day" } });
    expect(today.body).toMatchObject({
      calls: { count: 0, billed_seconds: 0, billed_minutes: 0 },
      sms: { received: 0 },
      numbers: { purchased: 0, renewed: 0 },
    });
  });

  it("summarises the last months oldest first, empty months as zeros, each equal to its raw rows", async () => {
    freeze();
    const rows = await alice.ledger.rows();
    const { body } = await alice.api.get("/v1/billing/summary");
    expect(body.months.map((m: any) => m.month)).toEqual(["2029-10", "2029-11", "2029-12", "2030-01", "2030-02", "2030-03"]);
    const zero = { credits: "0.000000", spend: "0.000000", net: "0.000000", by_category: { numbers: "0.000000", calls: "0.000000", sms: "0.000000" } };
    expect(body.months[0]).toEqual({ month: "2029-10", ...zero });
    expect(body.months[3]).toEqual({ month: "2030-01", ...zero });
    expect(body.months[4]).toEqual({
      month: "2030-02",
      credits: "0.000000",
      spend: "1.165000",
      net: "-1.165000",
      by_category: { numbers: "1.150000", calls: "0.015000", sms: "0.000000" },
    });
    expect(body.months[5]).toMatchObject({ credits: "6.500000", spend: "3.343550", net: "3.156450" });
    expect(body).toMatchObject({ currency: "USD", total_spend: "4.508550", total_credits: "56.500000" });
    for (const m of body.months) {
      const [y, mo] = m.month.split("-").map(Number);
      const mine = within(rows, new Date(Date.UTC(y, mo - 1, 1)), new Date(Date.UTC(y, mo, 1)));
      const expected = expenditureOf(mine);
      expect(m).toEqual({
        month: m.month,
        credits: expected.credits.total,
        spend: expected.total_spend,
        net: money(sumAmounts(mine)),
        by_category: expected.by_category,
      });
    }
    const one = await alice.api.get("/v1/billing/summary", { query: { months: 1 } });
    expect(one.body.months.map((m: any) => m.month)).toEqual(["2030-03"]);
    expect(one.body.total_spend).toBe("3.343550");
    expect((await alice.api.get("/v1/billing/summary", { query: { months: 24 } })).body.months[0].month).toBe("2028-04");
  });

  it("lists the ledger newest first, filtered by category and period, paged", async () => {
    freeze();
    const rows = (await alice.ledger.rows()).sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.transactionId < b.transactionId ? 1 : -1));
    const all = await alice.api.get("/v1/usage/transactions", { query: { limit: 100 } });
    expect(all.body.data.map((t: any) => t.transaction_id)).toEqual(rows.map((r) => r.transactionId));
    expect(all.body.data[0]).toEqual(present(rows[0]!));
    expect(all.body.data[0].balance_after).toBe((await alice.api.get("/v1/billing/balance")).body.balance);
    const calls = await alice.api.get("/v1/usage/transactions", { query: { category: "call", limit: 100 } });
    expect(calls.body.data.map((t: any) => t.transaction_id)).toEqual(rows.filter((r) => r.category === "call").map((r) => r.transactionId));
    const february = await alice.api.get("/v1/usage/transactions", { query: { from: "2030-02-01", to: "2030-03-01" } });
    expect(february.body.data.map((t: any) => t.transaction_id)).toEqual(within(rows, "2030-02-01", "2030-03-01").map((r) => r.transactionId));
    const today = await alice.api.get("/v1/usage/transactions", { query: { period: "day" } });
    expect(today.body.data).toEqual([]);
    const page = await alice.api.get("/v1/usage/transactions", { query: { limit: 3, offset: 3 } });
    expect(page.body).toMatchObject({ limit: 3, offset: 3, has_more: true });
    expect(page.body.data.map((t: any) => t.transaction_id)).toEqual(rows.slice(3, 6).map((r) => r.transactionId));
  });

  it("keeps accounts apart: Mallory's rows never reach Alice's reports, and Alice's number is not named in Mallory's", async () => {
    freeze();
    const numbersReport = await mallory.api.get("/v1/billing/expenditure/numbers");
    expect(numbersReport.body.data).toEqual([{ number_id: num1, phone_number: null, spend: "1.000000", months: 1, purchases: 0, renewals: 1 }]);
    const spend = await mallory.api.get("/v1/billing/expenditure");
    expect(spend.body).toMatchObject({ total_spend: "1.015000", by_category: { numbers: "1.000000", calls: "0.015000" } });
    const mine = await mallory.api.get("/v1/usage/transactions");
    const alicesIds = new Set((await alice.ledger.rows()).map((r) => r.transactionId));
    expect(mine.body.data.filter((t: any) => alicesIds.has(t.transaction_id))).toEqual([]);
  });
});

function present(row: LedgerRow) {
  return {
    transaction_id: row.transactionId,
    amount: money(row.amountMicros),
    balance_after: money(row.balanceAfterMicros),
    category: row.category,
    item: row.item,
    quantity: row.quantity,
    description: row.description,
    call_id: row.callId,
    number_id: row.numberId,
    message_id: row.messageId,
    created_at: row.createdAt.toISOString(),
  };
}

describe("period boundaries", () => {
  // Amounts are powers of two, so a total names exactly the rows it includes.
  const marks = {
    dayStart: ["2030-03-13T00:00:00.000Z", 1],
    beforeDay: ["2030-03-12T23:59:59.999Z", 2],
    weekStart: ["2030-03-11T00:00:00.000Z", 4],
    beforeWeek: ["2030-03-10T23:59:59.999Z", 8],
    monthStart: ["2030-03-01T00:00:00.000Z", 16],
    beforeMonth: ["2030-02-28T23:59:59.999Z", 32],
    yearStart: ["2030-01-01T00:00:00.000Z", 64],
    beforeYear: ["2029-12-31T23:59:59.999Z", 128],
    now: [NOW, 256],
    afterNow: ["2030-03-13T15:00:00.001Z", 512],
  } as const;
  let bob: Awaited<ReturnType<typeof newAccount>>;

  beforeAll(async () => {
    bob = await newAccount();
    await bob.ledger.credit("topup", 1_000_000, "2029-06-01T00:00:00Z");
    const ordered = Object.values(marks).sort((a, b) => a[0].localeCompare(b[0]));
    for (const [at, micros] of ordered) await bob.ledger.charge({ category: "sms", item: "sms.inbound", messageId: newId("msg"), quantity: 1 }, micros, at);
  });

  it.each([
    ["day", "2030-03-13T00:00:00.000Z", "2030-03-13", 1 + 256],
    ["week", "2030-03-11T00:00:00.000Z", "2030-W11", 1 + 2 + 4 + 256],
    ["month", "2030-03-01T00:00:00.000Z", "2030-03", 1 + 2 + 4 + 8 + 16 + 256],
    ["year", "2030-01-01T00:00:00.000Z", "2030", 1 + 2 + 4 + 8 + 16 + 32 + 64 + 256],
  ])("period=%s starts at %s (UTC), includes now, and leaves out the millisecond before", async (period, start, label, micros) => {
    freeze();
    const res = await bob.api.get("/v1/billing/expenditure", { query: { period } });
    expect(res.body.period).toEqual({ start, end: NOW, label });
    expect(res.body.total_spend).toBe(money(micros));
    expect(res.body).toMatchObject(expenditureOf(within(await bob.ledger.rows(), start, NOW, true)));
    const usage = await bob.api.get("/v1/usage", { query: { period } });
    expect(usage.body.sms.received).toBe(within(await bob.ledger.rows(), start, NOW, true).filter((r) => r.category === "sms").length);
  });

  it("names weeks by their ISO week, whose year can differ from the calendar year", async () => {
    freeze("2029-12-31T12:00:00Z"); // a Monday in ISO week 1 of 2030
    expect((await bob.api.get("/v1/usage", { query: { period: "week" } })).body.period).toEqual({
      start: "2029-12-31T00:00:00.000Z",
      end: "2029-12-31T12:00:00.000Z",
      label: "2030-W01",
    });
    freeze("2030-03-17T23:59:59Z"); // Sunday: still the week that began on Monday the 11th
    expect((await bob.api.get("/v1/usage", { query: { period: "week" } })).body.period.start).toBe("2030-03-11T00:00:00.000Z");
  });

  it.each([
    [{ from: "2030-02-01", to: "2030-03-01" }, 32, "to is exclusive: the row at 2030-03-01T00:00Z is out"],
    [{ from: "2030-03-01", to: "2030-03-13" }, 16 + 8 + 4 + 2, "from is inclusive"],
    [{ from: "2030-03-13T01:00:00+01:00", to: "2030-03-13T15:00:00.001Z" }, 1 + 256, "date-times with offsets"],
    [{ from: "2029-03-13", to: "2030-03-14" }, 1023, "366 days is allowed"],
  ])("an explicit range %o totals %i (%s)", async (query, micros) => {
    freeze();
    const res = await bob.api.get("/v1/billing/expenditure", { query });
    expect(res.status).toBe(200);
    const start = new Date(Date.parse(query.from)).toISOString();
    const end = new Date(Date.parse(query.to)).toISOString();
    expect(res.body.period).toEqual({ start, end, label: `${start}/${end}` });
    expect(res.body.total_spend).toBe(money(micros));
    expect(res.body).toMatchObject(expenditureOf(within(await bob.ledger.rows(), start, end)));
  });
});

// A call's ledger rows that carry no item (the ledger allows it; every row the service writes
// today has one) must not be reported as outbound or inbound.
describe("per-call spend", () => {
  it("gives a call whose rows name no item no direction, and counts it as a call of neither kind", async () => {
    service.core.now = () => new Date(NOW);
    const account = await createAccount(service.core, undefined, { creditMicros: 0 });
    const api = new Api(service.baseUrl, account.apiKey);
    const ledger = ledgerOf(service.core, account.accountId);
    const plain = newId("call");
    const outbound = newId("call");
    await ledger.credit("topup", 1_000_000, "2030-03-02T00:00:00Z");
    await ledger.charge({ category: "call", callId: outbound, item: "call.outbound", quantity: 60 }, 15_000, "2030-03-03T00:00:00Z");
    await ledger.charge({ category: "call", callId: plain, quantity: 10 }, 2_500, "2030-03-04T00:00:00Z");

    const { body } = await api.get("/v1/billing/expenditure/calls");
    expect(body.data.map((c: any) => [c.call_id, c.direction, c.spend, c.billed_seconds])).toEqual([
      [plain, null, "0.002500", 10],
      [outbound, "outbound", "0.015000", 60],
    ]);
    expect((await api.get("/v1/usage")).body.calls).toEqual({ count: 2, inbound: 0, outbound: 1, billed_seconds: 70, billed_minutes: 1.17 });
  });
});
