import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openDatabase } from "../../core/db/database.js";
import { createLogger } from "../../core/logger.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { type ServiceProcess, spawnService } from "../../harness/process.js";
import { createTestDatabase } from "../support/postgres.js";
import { RawWebSocket } from "../support/raw-websocket.js";
import { onPostgres } from "../support/service.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";
import { waitFor } from "../support/twilio/service.js";

// The service as its own process, started as `npm start` starts it: what ends a process can only
// be seen there.

let database: { env: Record<string, string>; drop(): Promise<void> };
let attacker: TestAccount;
let tenant: TestAccount;

beforeAll(async () => {
  if (onPostgres) {
    const created = await createTestDatabase(inject("postgresTemplate")!);
    database = { env: { DATABASE_URL: created.url }, drop: created.drop };
  } else {
    const dataDir = mkdtempSync(join(tmpdir(), "agentline-hostile-"));
    database = { env: { DATA_DIR: dataDir }, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const { DATABASE_URL: url, DATA_DIR: dataDir = "unused" } = database.env;
  const handle = await openDatabase({ ...(url ? { url } : {}), dataDir, logger: createLogger("silent") });
  [attacker, tenant] = [await createAccount({ db: handle.db }), await createAccount({ db: handle.db })];
  await handle.close();
});
afterAll(() => database?.drop());

/** The other tenant: reads its agents, and must get them. */
async function served(service: ServiceProcess): Promise<void> {
  const res = await new Api(service.baseUrl, tenant.apiKey).get("/v1/agents", { unchecked: true });
  expect(res.status, res.text).toBe(200);
}

const serve = (preload: string[] = []) => spawnService({ ...database.env, LOG_LEVEL: "info" }, ["node", ...preload, "dist/bin/agentline.js", "serve"]);

describe("a service process under attack", () => {
  it("survives an oversized frame on the relay and on the softphone, and keeps serving", { timeout: 120_000 }, async () => {
    const service = await serve();
    try {
      const api = new Api(service.baseUrl, attacker.apiKey);
      const { agentId } = await agentWithNumber(api);
      const callId = await answeredCall(api, agentId);
      const ws = service.baseUrl.replace(/^http/, "ws");
      const auth = { Authorization: `Bearer ${attacker.apiKey}` };
      for (const [path, maxPayload] of [
        [`/v1/events/ws?agent_id=${agentId}`, 256 * 1024],
        [`/v1/sandbox/calls/${callId}/ws`, 64 * 1024],
      ] as const) {
        const socket = await RawWebSocket.open(`${ws}${path}`, auth);
        socket.send({ opcode: 0x1, payload: "x".repeat(16), declaredLength: maxPayload + 1 });
        expect((await socket.ended).code).toBe(1009);
        await served(service);
      }
      expect(service.child.exitCode).toBeNull();
      expect(service.output()).toContain("websocket closed on a protocol error");
    } finally {
      await service.stop();
    }
  });

  it("keeps serving past an error scoped to one connection that escaped every handler, and exits with a fatal line on any other", {
    timeout: 120_000,
  }, async () => {
    const service = await serve(["--import", "./test/support/escaping-errors.mjs"]);
    try {
      const escapedLines = () =>
        service
          .output()
          .split("\n")
          .filter((line) => line.includes("an error on one connection escaped its handler")).length;
      service.child.kill("SIGUSR2");
      await waitFor(() => escapedLines() === 1, 10_000);
      await served(service);
      service.child.kill("SIGWINCH");
      await waitFor(() => escapedLines() === 2, 10_000);
      await served(service);
      expect(service.child.exitCode).toBeNull();

      service.child.kill("SIGHUP");
      expect(await service.exited).toBe(1);
      const fatal = service
        .output()
        .split("\n")
        .find((line) => line.includes("unexpected error: exiting"));
      expect(fatal).toBeDefined();
      expect(JSON.parse(fatal!)).toMatchObject({
        level: 60,
        origin: "uncaughtException",
        err: { type: "TypeError", message: expect.stringContaining("balance") },
      });
    } finally {
      service.kill();
    }
  });
});
