import { Writable } from "node:stream";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { BillingJobs } from "../../core/billing/billing-jobs.js";
import { meterCalls } from "../../core/billing/call-billing.js";
import { renewLeases } from "../../core/billing/renewals.js";
import { meterTransfers } from "../../core/billing/transfer-billing.js";
import type { Core } from "../../core/context.js";
import type { Executor } from "../../core/db/database.js";
import { calls } from "../../core/db/schema/calls.js";
import { numbers } from "../../core/db/schema/numbers.js";
import { createLogger } from "../../core/logger.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { onPostgres } from "../support/service.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";
import { waitFor } from "../support/twilio/service.js";
import { callRow, coreAt, manualClock, serviceForFile } from "./support.js";

// The billing timer itself (every other test calls runOnce by hand): it runs one pass at a time,
// keeps running after a pass fails, logs the failure, and stops on close. The pass is made to
// reach the hang-up port, by a call whose money has run out; the port is this test's, so the test
// decides when a pass ends and whether it fails.
// The service's own timer is set to an hour: only the jobs made here run.
const service = serviceForFile({ env: { BILLING_INTERVAL_MS: "3600000" } });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the billing timer", () => {
  it("runs one pass at a time, logs a failed pass and runs again, and stops on close", async () => {
    const clock = manualClock(service().core);
    // After the number, exactly the first minute of an outbound call.
    const account = await createAccount(service().core, undefined, { creditMicros: 1_150_000 + 15_000 });
    const api = new Api(service().baseUrl, account.apiKey);
    const { agentId } = await agentWithNumber(api);
    const call = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" })).body;
    expect(call.status).toBe("in-progress");
    clock.set(new Date(Date.parse(call.answered_at) + 61_000));

    // The service's core, seen with a 50 ms interval and a log this test reads.
    const log: Array<Record<string, any>> = [];
    const logger = createLogger(
      "error",
      new Writable({
        write: (chunk, _e, done) => (
          log.push(
            ...String(chunk)
              .trim()
              .split("\n")
              .map((l) => JSON.parse(l)),
          ),
          done()
        ),
      }),
    );
    const core = Object.create(service().core, { config: { value: { ...service().core.config, billingIntervalMs: 50 } }, logger: { value: logger } }) as Core;

    // The port is asked to end the call; the first time, it holds the pass until the test lets it go.
    const asked: Array<{ callId: string; at: string }> = [];
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const jobs = new BillingJobs(core, async (callId, at) => {
      asked.push({ callId, at: at.toISOString() });
      await held;
      throw new Error("the hang-up failed");
    });

    jobs.start();
    try {
      await waitFor(() => asked.length > 0, 10_000);
      expect(asked[0]).toEqual({ callId: call.call_id, at: new Date(Date.parse(call.answered_at) + 60_000).toISOString() });
      // Ten ticks go by while the pass is held: none starts another pass.
      await sleep(500);
      expect(asked).toHaveLength(1);

      letGo();
      await waitFor(() => log.some((l) => l.msg === "billing jobs failed"), 10_000);
      expect(log.find((l) => l.msg === "billing jobs failed")).toMatchObject({ level: 50, err: { message: "the hang-up failed" } });
      // The failed pass did not stop the timer: the call, still unpaid, is found again.
      await waitFor(() => asked.length >= 2, 10_000);
    } finally {
      await jobs.close();
    }
    const after = asked.length;
    await sleep(300);
    expect(asked).toHaveLength(after);
  });
});

// Any number of processes may run the jobs: each claims a row with FOR UPDATE SKIP LOCKED, so a
// row another process (here, a test transaction) holds is passed over, not waited for, and taken
// on a later pass. PGlite has one connection, so only PostgreSQL can hold a row against a pass.
describe.runIf(onPostgres)("a row another process holds (PostgreSQL)", () => {
  // The jobs run on a clock of their own, years past any row other tests leave due.
  const at = new Date("2031-06-01T00:00:00Z");

  /** Runs `job` while another transaction holds a row (`lock`): its result, or "blocked" if it waited 2 s. */
  async function whileHeld<T>(lock: (tx: Executor) => Promise<unknown>, job: () => Promise<T>): Promise<T | "blocked"> {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const holder = service().core.db.transaction(async (tx) => {
      await lock(tx);
      held();
      await gate;
    });
    await holding;
    const running = job();
    try {
      return await Promise.race([running, sleep(2_000).then(() => "blocked" as const)]);
    } finally {
      release();
      await holder;
      await running.catch(() => undefined);
    }
  }

  /** A live call of a well-funded account, and its number. */
  async function liveCall() {
    const account = await createAccount(service().core, undefined, { creditMicros: 10_000_000 });
    const api = new Api(service().baseUrl, account.apiKey);
    const { agentId, numberId } = await agentWithNumber(api);
    return { callId: await answeredCall(api, agentId), numberId };
  }
  const holdCall = (callId: string) => (tx: Executor) => tx.select().from(calls).where(eq(calls.callId, callId)).for("update");

  it("the call meter passes over a held call, and buys its block on the next pass", async () => {
    const { callId } = await liveCall();
    const due = new Date(at.getTime() - 1_000);
    await service().core.db.update(calls).set({ paidUntil: due }).where(eq(calls.callId, callId));
    const passed = await whileHeld(holdCall(callId), () => meterCalls(coreAt(service().core, at)));
    expect(passed).not.toBe("blocked");
    expect((passed as Array<{ callId: string }>).filter((c) => c.callId === callId)).toEqual([]);
    expect((await callRow(service().core, callId)).paidUntil).toEqual(due);
    await meterCalls(coreAt(service().core, at));
    expect((await callRow(service().core, callId)).paidUntil).toEqual(new Date(due.getTime() + 60_000));
  });

  it("the bridged legs' meter passes over a held call, and buys its leg's block on the next pass", async () => {
    const { callId } = await liveCall();
    const due = new Date(at.getTime() - 1_000);
    await service()
      .core.db.update(calls)
      .set({ transferStatus: "bridged", transferAnsweredAt: new Date(due.getTime() - 60_000), transferRateMicrosPerSecond: 100, transferPaidUntil: due })
      .where(eq(calls.callId, callId));
    const passed = await whileHeld(holdCall(callId), () => meterTransfers(coreAt(service().core, at)));
    expect(passed).not.toBe("blocked");
    expect((passed as Array<{ callId: string }>).filter((c) => c.callId === callId)).toEqual([]);
    expect((await callRow(service().core, callId)).transferPaidUntil).toEqual(due);
    await meterTransfers(coreAt(service().core, at));
    expect((await callRow(service().core, callId)).transferPaidUntil).toEqual(new Date(due.getTime() + 60_000));
  });

  it("the lease renewal passes over a held number, returns only the numbers it released, and renews it on the next pass", async () => {
    const { numberId } = await liveCall();
    const due = new Date(at.getTime() - 60_000);
    await service().core.db.update(numbers).set({ paidThrough: due }).where(eq(numbers.numberId, numberId));
    const numberRow = async () => (await service().core.db.select().from(numbers).where(eq(numbers.numberId, numberId)))[0]!;
    const passed = await whileHeld(
      (tx) => tx.select().from(numbers).where(eq(numbers.numberId, numberId)).for("update"),
      () => renewLeases(coreAt(service().core, at)),
    );
    expect(passed).not.toBe("blocked");
    // What it returns is what it released (other tests' numbers, long unpaid by this clock), for the carrier.
    const releasedNow = await service().core.db.select({ numberId: numbers.numberId }).from(numbers).where(eq(numbers.releasedAt, at));
    expect((passed as Array<{ numberId: string }>).map((n) => n.numberId).sort()).toEqual(releasedNow.map((n) => n.numberId).sort());
    expect(await numberRow()).toMatchObject({ status: "active", paidThrough: due });
    await renewLeases(coreAt(service().core, at));
    expect(await numberRow()).toMatchObject({ status: "active" });
    expect((await numberRow()).paidThrough!.getTime()).toBeGreaterThan(due.getTime());
  });
});
