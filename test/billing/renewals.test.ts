import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { credit } from "../../core/billing/ledger.js";
import { addMonths } from "../../core/billing/months.js";
import { renewLeases } from "../../core/billing/renewals.js";
import { numbers } from "../../core/db/schema/numbers.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { drainEvents } from "../support/telephony.js";
import { expectBalanceIsLedgerSum, ledgerOf, manualClock, serviceForFile } from "./support.js";

// The lease job's rules, one number at a time, by calling renewLeases directly with a hand-moved
// clock: the exact moment a lease is due, what a renewal writes, the grace period to the
// millisecond, what the agent is told, and numbers no agent holds. A local number is 1.15/month;
// NUMBER_GRACE_DAYS is 7. The service's own timer is set to an hour so it never runs beside these.
const FEE = 1_150_000;
const DAY = 86_400_000;
const GRACE = 7 * DAY;

const service = serviceForFile({ env: { BILLING_INTERVAL_MS: "3600000" } });

/** An account holding one number bought through the API at `boughtAt`, with `spare` micro-USD left after the purchase. */
async function numberBought(boughtAt: string, spare: number) {
  const clock = manualClock(service().core, new Date(boughtAt));
  const account = await createAccount(service().core, undefined, { creditMicros: FEE + spare });
  const api = new Api(service().baseUrl, account.apiKey);
  const agentId = (await api.post("/v1/agents", { name: "Leaseholder" })).body.agent_id as string;
  const bought = await api.post("/v1/numbers", { agent_id: agentId });
  expect(bought.status).toBe(201);
  const { number_id: numberId, phone_number: phoneNumber, renews_at: renewsAt } = bought.body as { number_id: string; phone_number: string; renews_at: string };
  await drainEvents(api, agentId);
  return { clock, account, api, agentId, numberId, phoneNumber, renewsAt };
}

async function row(numberId: string) {
  const [found] = await service().core.db.select().from(numbers).where(eq(numbers.numberId, numberId));
  return found!;
}

/** Runs the job, answering the ids of the numbers it released (other tests' numbers may be due too). */
async function runJob(): Promise<string[]> {
  return (await renewLeases(service().core)).map((n) => n.numberId);
}

describe("a renewal", () => {
  it("is due at the very moment the paid time ends, not a millisecond before", async () => {
    const { clock, account, numberId, renewsAt } = await numberBought("2027-05-10T10:00:00.000Z", FEE);
    clock.set(new Date(Date.parse(renewsAt) - 1));
    await runJob();
    expect(await ledgerOf(service().core, account.accountId)).toHaveLength(2); // the credit and the purchase
    clock.set(new Date(renewsAt));
    await runJob();
    expect(await ledgerOf(service().core, account.accountId)).toHaveLength(3);
    expect((await row(numberId)).paidThrough!.toISOString()).toBe("2027-07-10T10:00:00.000Z");
  });

  it("charges one month with a ledger line that names the number, and moves paid time on by a calendar month", async () => {
    // Bought on January 31st: paid through February 28th, then renewed to March 28th.
    const { clock, account, api, numberId, phoneNumber, renewsAt } = await numberBought("2027-01-31T10:00:00.000Z", FEE + 100);
    expect(renewsAt).toBe("2027-02-28T10:00:00.000Z");
    clock.set(new Date("2027-02-28T10:00:05.000Z"));
    expect(await runJob()).not.toContain(numberId);

    const renewal = (await ledgerOf(service().core, account.accountId)).at(-1);
    expect(renewal).toMatchObject({
      amountMicros: -FEE,
      balanceAfterMicros: 100,
      category: "number",
      item: "number.renewal",
      numberId,
      quantity: 1,
      description: `${phoneNumber}: one more month`,
      createdAt: new Date("2027-02-28T10:00:05.000Z"),
    });
    expect(await row(numberId)).toMatchObject({ status: "active", paidThrough: new Date("2027-03-28T10:00:00.000Z"), renewalFailedAt: null });
    expect((await api.get(`/v1/numbers/${numberId}`)).body.renews_at).toBe("2027-03-28T10:00:00.000Z");
    await expectBalanceIsLedgerSum(service().core, account.accountId);
  });
});

describe("a renewal the balance cannot pay", () => {
  it("keeps the number, writes nothing to the ledger, and tells the agent the amount and when it will be released", async () => {
    const { clock, account, api, agentId, numberId, phoneNumber, renewsAt } = await numberBought("2027-06-03T08:00:00.000Z", FEE - 1);
    const failedAt = new Date(Date.parse(renewsAt) + 30_000);
    clock.set(failedAt);
    expect(await runJob()).not.toContain(numberId);

    expect(await row(numberId)).toMatchObject({ status: "active", renewalFailedAt: failedAt, paidThrough: new Date(renewsAt) });
    expect(await ledgerOf(service().core, account.accountId)).toHaveLength(2);
    expect((await drainEvents(api, agentId)).map((e) => [e.event_type, e.payload])).toEqual([
      [
        "number.renewal_failed",
        { number_id: numberId, phone_number: phoneNumber, amount: "1.150000", currency: "USD", release_at: new Date(failedAt.getTime() + GRACE).toISOString() },
      ],
    ]);

    // Retried meanwhile, without telling the agent again or restarting the grace period.
    clock.set(new Date(failedAt.getTime() + DAY));
    await runJob();
    expect((await row(numberId)).renewalFailedAt).toEqual(failedAt);
    expect(await drainEvents(api, agentId)).toEqual([]); // the first event was taken above
  });

  it("releases the number at exactly the end of the grace period, not a millisecond before, and says why", async () => {
    const { clock, api, agentId, numberId, phoneNumber, renewsAt } = await numberBought("2027-07-04T12:00:00.000Z", 0);
    const failedAt = new Date(renewsAt);
    clock.set(failedAt);
    await runJob();

    clock.set(new Date(failedAt.getTime() + GRACE - 1));
    expect(await runJob()).not.toContain(numberId);
    expect((await row(numberId)).status).toBe("active");

    const releasedAt = new Date(failedAt.getTime() + GRACE);
    clock.set(releasedAt);
    expect(await runJob()).toContain(numberId);
    expect(await row(numberId)).toMatchObject({ status: "released", releasedAt });
    const released = (await drainEvents(api, agentId)).filter((e) => e.event_type === "number.released");
    expect(released.map((e) => e.payload)).toEqual([
      { number_id: numberId, phone_number: phoneNumber, reason: "unpaid", released_at: releasedAt.toISOString() },
    ]);
  });

  it("renews a number in its grace period once the balance can pay, and a later failure gets a full grace period of its own", async () => {
    const { clock, account, api, agentId, numberId, renewsAt } = await numberBought("2027-08-05T12:00:00.000Z", 0);
    const firstFailure = new Date(renewsAt);
    clock.set(firstFailure);
    await runJob();
    await credit(service().core.db, { accountId: account.accountId, category: "topup", description: "one more month", at: firstFailure }, FEE);

    clock.set(new Date(firstFailure.getTime() + 2 * DAY));
    await runJob();
    expect(await row(numberId)).toMatchObject({ status: "active", renewalFailedAt: null, paidThrough: new Date("2027-10-05T12:00:00.000Z") });

    // The next month cannot be paid: the count starts again from this failure, not the first one.
    const secondFailure = new Date("2027-10-05T12:00:00.000Z");
    clock.set(secondFailure);
    await runJob();
    expect((await row(numberId)).renewalFailedAt).toEqual(secondFailure);
    expect((await drainEvents(api, agentId)).filter((e) => e.event_type === "number.renewal_failed")).toHaveLength(2);
    clock.set(new Date(secondFailure.getTime() + GRACE - 1));
    expect(await runJob()).not.toContain(numberId);
    expect((await row(numberId)).status).toBe("active");
    await expectBalanceIsLedgerSum(service().core, account.accountId);
  });
});

describe("numbers without an agent, and leases that do not renew", () => {
  it("fails and releases a number no agent holds without an event to send", async () => {
    const { clock, account, api, agentId, numberId, renewsAt } = await numberBought("2027-09-06T12:00:00.000Z", 0);
    await service().core.db.update(numbers).set({ agentId: null }).where(eq(numbers.numberId, numberId));
    clock.set(new Date(renewsAt));
    await runJob();
    expect((await row(numberId)).renewalFailedAt).toEqual(new Date(renewsAt));
    clock.set(new Date(Date.parse(renewsAt) + GRACE));
    expect(await runJob()).toContain(numberId);
    expect((await row(numberId)).status).toBe("released");
    expect(await drainEvents(api, agentId)).toEqual([]);
    expect(await ledgerOf(service().core, account.accountId)).toHaveLength(2);
  });

  it("releases a lease that does not renew itself when it ends, charging nothing however much money there is", async () => {
    const { clock, account, api, agentId, numberId, phoneNumber, renewsAt } = await numberBought("2027-10-07T12:00:00.000Z", 10 * FEE);
    await service().core.db.update(numbers).set({ autoRenew: false }).where(eq(numbers.numberId, numberId));
    const endedAt = new Date(renewsAt);
    clock.set(endedAt);
    expect(await runJob()).toContain(numberId);
    expect(await row(numberId)).toMatchObject({ status: "released", releasedAt: endedAt });
    expect(await ledgerOf(service().core, account.accountId)).toHaveLength(2);
    expect((await drainEvents(api, agentId)).map((e) => [e.event_type, e.payload])).toEqual([
      ["number.released", { number_id: numberId, phone_number: phoneNumber, reason: "lease_expired", released_at: endedAt.toISOString() }],
    ]);
  });
});

// A number's lease runs in calendar months: the renewal date keeps its day of the month, except
// where the month is too short for it. The 22nd (the case the renewal tests use) never shows that.
const plus = (iso: string, n: number) => addMonths(new Date(iso), n).toISOString();

describe("addMonths", () => {
  it("keeps the day and the time of day", () => {
    expect(plus("2026-11-22T10:00:00.000Z", 1)).toBe("2026-12-22T10:00:00.000Z");
    expect(plus("2026-11-22T10:00:00.000Z", 2)).toBe("2027-01-22T10:00:00.000Z");
    expect(plus("2027-01-22T10:00:00.000Z", -2)).toBe("2026-11-22T10:00:00.000Z");
  });

  it("clamps to the last day of a shorter month, leap years included", () => {
    expect(plus("2027-01-31T23:30:00.000Z", 1)).toBe("2027-02-28T23:30:00.000Z");
    expect(plus("2028-01-31T23:30:00.000Z", 1)).toBe("2028-02-29T23:30:00.000Z");
    expect(plus("2027-03-31T08:00:00.000Z", 1)).toBe("2027-04-30T08:00:00.000Z");
    expect(plus("2027-08-31T08:00:00.000Z", 1)).toBe("2027-09-30T08:00:00.000Z");
  });

  it("does not carry a clamp into later months: Jan 31 + 2 is Mar 31", () => {
    expect(plus("2027-01-31T00:00:00.000Z", 2)).toBe("2027-03-31T00:00:00.000Z");
    expect(plus("2027-12-31T00:00:00.000Z", 1)).toBe("2028-01-31T00:00:00.000Z");
  });

  it("does not change the date it is given", () => {
    const start = new Date("2027-01-31T00:00:00.000Z");
    addMonths(start, 1);
    expect(start.toISOString()).toBe("2027-01-31T00:00:00.000Z");
  });
});
