import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { operatorCredit } from "../../core/billing/operator-credit.js";
import type { Core } from "../../core/context.js";
import { type DatabaseHandle, openDatabase } from "../../core/db/database.js";
import type { AppError } from "../../core/errors.js";
import { createLogger } from "../../core/logger.js";
import { createAccount } from "../../harness/accounts.js";
import { projectRoot } from "../../harness/process.js";
import { createTestDatabase } from "../support/postgres.js";
import { onPostgres, startTestService, type TestService } from "../support/service.js";
import { expectBalanceIsLedgerSum, ledgerOf } from "./support.js";

const run = promisify(execFile);

/** The database the command will open, as the service would: DATA_DIR here, or a clone on PostgreSQL. */
async function database(): Promise<{ env: Record<string, string>; open(): Promise<DatabaseHandle>; drop(): Promise<void> }> {
  const logger = createLogger("silent");
  if (onPostgres) {
    const db = await createTestDatabase(inject("postgresTemplate")!);
    return { env: { DATABASE_URL: db.url }, open: () => openDatabase({ url: db.url, dataDir: "unused", logger }), drop: db.drop };
  }
  const dir = mkdtempSync(join(tmpdir(), "agentline-admin-"));
  return { env: { DATA_DIR: dir }, open: () => openDatabase({ dataDir: dir, logger }), drop: async () => rmSync(dir, { recursive: true, force: true }) };
}

const admin = (env: Record<string, string>, ...args: string[]) =>
  run("node", ["dist/bin/agentline.js", "admin", ...args], { cwd: projectRoot, env: { PATH: process.env.PATH, LOG_LEVEL: "error", ...env } }).then(
    (r) => ({ code: 0, ...r }),
    (e) => ({ code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string }),
  );

describe("agentline admin credit", () => {
  // Six runs of the real command, each booting the embedded database in a process of its own.
  it("credits an account from the command line, with the note in the ledger", { timeout: 120_000 }, async () => {
    const db = await database();
    try {
      let handle = await db.open();
      const account = await createAccount({ db: handle.db }, undefined, { creditMicros: 0 });
      await handle.close();

      const result = await admin(db.env, "credit", "--account", account.accountId, "--amount", "10.5", "--note", "goodwill for the outage");
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ account_id: account.accountId, amount: "10.500000", balance: "10.500000", currency: "USD" });

      handle = await db.open();
      const core = { db: handle.db } as Core;
      const [line] = await ledgerOf(core, account.accountId);
      expect(line).toMatchObject({ category: "operator_credit", amountMicros: 10_500_000, description: "goodwill for the outage" });
      await expectBalanceIsLedgerSum(core, account.accountId);
      await handle.close();

      for (const args of [
        ["--account", account.accountId, "--amount", "-1", "--note", "x"],
        ["--account", account.accountId, "--amount", "0", "--note", "x"],
        ["--account", "acct_nope", "--amount", "1", "--note", "x"],
        ["--account", account.accountId, "--amount", "1"],
      ]) {
        const refused = await admin(db.env, "credit", ...args);
        expect(refused.code, args.join(" ")).not.toBe(0);
        expect(refused.stderr).toMatch(/agentline admin credit: /);
      }
    } finally {
      await db.drop();
    }
  });
});

// The same rules, in this process (the command above runs in its own, where the mutation run
// cannot see which of them a test pins).
describe("operatorCredit", () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(() => service?.stop());

  const refusal = (input: { accountId: string; amountUsd: string; note: string }) =>
    operatorCredit(service.core, input).then(
      () => null,
      (error: AppError) => ({ code: error.code, status: error.status, detail: error.detail }),
    );

  it("credits the account, with the note trimmed into the ledger, and answers the new balance", async () => {
    const account = await createAccount(service.core, undefined, { creditMicros: 2_000_000 });
    const result = await operatorCredit(service.core, { accountId: account.accountId, amountUsd: "0.25", note: "  bank transfer  " });
    const [, line] = await ledgerOf(service.core, account.accountId);
    expect(result).toEqual({ account_id: account.accountId, transaction_id: line!.transactionId, amount: "0.250000", balance: "2.250000", currency: "USD" });
    expect(line).toMatchObject({ category: "operator_credit", amountMicros: 250_000, description: "bank transfer" });
    await expectBalanceIsLedgerSum(service.core, account.accountId);
  });

  it("refuses an amount that is not a positive dollar amount, a blank note and an unknown account, writing nothing", async () => {
    const account = await createAccount(service.core, undefined, { creditMicros: 0 });
    for (const amountUsd of ["0", "0.000000", "-1", "1.0000001", "ten"]) {
      expect(await refusal({ accountId: account.accountId, amountUsd, note: "x" }), amountUsd).toEqual({
        code: "validation_error",
        status: 422,
        detail: "amount must be a positive dollar amount with at most 6 decimals, such as 10 or 2.50.",
      });
    }
    for (const note of ["", "   "]) {
      expect(await refusal({ accountId: account.accountId, amountUsd: "1", note })).toEqual({
        code: "validation_error",
        status: 422,
        detail: "note must say why the credit is given.",
      });
    }
    expect(await refusal({ accountId: "acct_nope", amountUsd: "1", note: "x" })).toMatchObject({ code: "not_found", status: 404 });
    expect((await refusal({ accountId: "acct_nope", amountUsd: "1", note: "x" }))!.detail).toBe('No account with id "acct_nope" exists on this account.');
    expect(await ledgerOf(service.core, account.accountId)).toEqual([]);
  });
});
