import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, expect } from "vitest";
import type { Core } from "../../core/context.js";
import { accounts } from "../../core/db/schema/accounts.js";
import { calls } from "../../core/db/schema/calls.js";
import { ledgerEntries } from "../../core/db/schema/ledger-entries.js";
import { startTestService, type TestService, type TestServiceOptions } from "../support/service.js";

/** The account's ledger rows, oldest first. */
export async function ledgerOf(core: Core, accountId: string) {
  return core.db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, accountId)).orderBy(ledgerEntries.transactionId);
}

/** Asserts the invariant every money test ends on: the balance is the ledger's sum, and not negative. */
export async function expectBalanceIsLedgerSum(core: Core, accountId: string): Promise<number> {
  const [account] = await core.db.select({ balance: accounts.balanceMicros }).from(accounts).where(eq(accounts.accountId, accountId));
  const rows = await ledgerOf(core, accountId);
  const sum = rows.reduce((total, row) => total + row.amountMicros, 0);
  expect(account!.balance).toBe(sum);
  expect(account!.balance).toBeGreaterThanOrEqual(0);
  if (rows.length > 0) expect(rows.at(-1)!.balanceAfterMicros).toBe(account!.balance);
  return sum;
}

/** A clock a test moves by hand (the service reads core.now()). */
export function manualClock(core: Core, start = new Date("2026-11-22T10:00:00.000Z")) {
  let now = start.getTime();
  core.now = () => new Date(now);
  return {
    advance(ms: number) {
      now += ms;
    },
    set(date: Date) {
      now = date.getTime();
    },
    now: () => new Date(now),
  };
}

/**
 * The core seen at a fixed moment: a job run on it reads `at` as now. Unlike manualClock, the
 * service's own billing timer keeps the real clock, so it cannot meet the moment a test picked.
 */
export function coreAt(core: Core, at: Date): Core {
  return Object.create(core, { now: { value: () => at } }) as Core;
}

/** A call's row as stored. */
export async function callRow(core: Core, callId: string) {
  return (await core.db.select().from(calls).where(eq(calls.callId, callId)))[0]!;
}

/**
 * One service for the whole test file: started before its first test, stopped after its last,
 * and its clock put back after each test (tests here move it with manualClock).
 */
export function serviceForFile(options: TestServiceOptions = {}): () => TestService {
  let service: TestService | undefined;
  beforeAll(async () => {
    service = await startTestService(options);
  });
  afterAll(() => service?.stop());
  afterEach(() => {
    if (service) service.core.now = () => new Date();
  });
  return () => service!;
}
