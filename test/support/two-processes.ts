import { inject } from "vitest";
import { openDatabase } from "../../core/db/database.js";
import { createLogger } from "../../core/logger.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { type ServiceProcess, spawnService } from "../../harness/process.js";
import { createTestDatabase } from "./postgres.js";

export interface TwoProcesses {
  url: string;
  account: TestAccount;
  a: ServiceProcess;
  b: ServiceProcess;
  stop(): Promise<void>;
}

/** A PostgreSQL database of its own with an account in it, and two service processes on it. */
export async function twoProcesses(env: Record<string, string>): Promise<TwoProcesses> {
  const database = await createTestDatabase(inject("postgresTemplate")!);
  const handle = await openDatabase({ url: database.url, dataDir: "unused", logger: createLogger("silent") });
  const account = await createAccount({ db: handle.db });
  await handle.close();
  const serve = ["node", "dist/bin/agentline.js", "serve"];
  const [a, b] = await Promise.all([spawnService({ DATABASE_URL: database.url, ...env }, serve), spawnService({ DATABASE_URL: database.url, ...env }, serve)]);
  return {
    url: database.url,
    account,
    a,
    b,
    async stop() {
      await Promise.all([a.stop(), b.stop()]);
      await database.drop();
    },
  };
}
