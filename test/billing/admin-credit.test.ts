import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, inject, it } from "vitest";
import type { Core } from "../../core/context.js";
import { openDatabase, type DatabaseHandle } from "../../core/db/database.js";
import { createLogger } from "../../core/logger.js";
import { createAccount } from "../support/accounts.js";
import { createTestDatabase } from "../support/postgres.js";
import { projectRoot } from "../support/process.js";
import { onPostgres } from "../support/service.js";
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

      for (const args of [["--account", account.accountId, "--amount", "-1", "--note", "x"], ["--account", account.accountId, "--amount", "0", "--note", "x"], ["--account", "acct_nope", "--amount", "1", "--note", "x"], ["--account", account.accountId, "--amount", "1"]]) {
        const refused = await admin(db.env, "credit", ...args);
        expect(refused.code, args.join(" ")).not.toBe(0);
        expect(refused.stderr).toMatch(/agentline admin credit: /);
      }
    } finally {
      await db.drop();
    }
  });
});
