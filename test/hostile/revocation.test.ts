import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DatabaseHandle, openDatabase } from "../../core/db/database.js";
import { createLogger } from "../../core/logger.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import type { FrameSocket } from "../../harness/frame-socket.js";
import { RelayClient } from "../../harness/relay-client.js";
import { type Bystander, bystander } from "../support/bystander.js";
import { httpMcp } from "../support/mcp.js";
import { onPostgres, startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";
import { type TwoProcesses, twoProcesses } from "../support/two-processes.js";

/** The close code of a socket whose credential was revoked (gateway/ws/close-on-revoke.ts). */
const CREDENTIAL_REVOKED = 4401;

/** Where the sockets and waits are opened, where the revoke is sent, and who is watching. */
interface Stage {
  openOn: string;
  revokeOn: string;
  account: TestAccount;
  others: Bystander;
}

/** A second API key of the account: the one each test opens things with, then revokes. */
async function spareKey(stage: Stage): Promise<{ key: string; keyId: string }> {
  const minted = await new Api(stage.openOn, stage.account.apiKey).post("/v1/auth/keys", { name: "to revoke" });
  expect(minted.status).toBe(201);
  return { key: minted.body.api_key, keyId: minted.body.key_id };
}

/** Revokes through the other side; resolves with the moment the revoke was answered. */
async function revoke(stage: Stage, path: string): Promise<number> {
  const res = await new Api(stage.revokeOn, stage.account.apiKey).delete(path);
  expect(res.status).toBe(200);
  return performance.now();
}

/** The socket's close, at most 3 s away, and how long after `since` it came (0 if before). */
async function closing(socket: FrameSocket, since: () => number): Promise<{ code: number; afterMs: number }> {
  const closed = await Promise.race([socket.closed, new Promise<null>((resolve) => setTimeout(() => resolve(null), 3_000))]);
  expect(closed, "the socket was still open 3 s after the revoke").not.toBeNull();
  return { code: closed!.code, afterMs: Math.max(0, performance.now() - since()) };
}

function scenarios(stage: () => Stage) {
  it("closes a relay socket opened with a key (4401) within a second of the key's revoke, and it stays shut", async () => {
    const s = stage();
    const { key, keyId } = await spareKey(s);
    const { agentId } = await agentWithNumber(new Api(s.openOn, s.account.apiKey));
    const relay = await RelayClient.connect(s.openOn, { agent_id: agentId }, key);
    await relay.next((f) => f.type === "ready");
    let revokedAt = Infinity;
    const closed = closing(relay, () => revokedAt);
    revokedAt = await revoke(s, `/v1/auth/keys/${keyId}`);
    const { code, afterMs } = await closed;
    expect(code).toBe(CREDENTIAL_REVOKED);
    expect(afterMs).toBeLessThan(1_000);
    await expect(RelayClient.connect(s.openOn, { agent_id: agentId }, key)).rejects.toMatchObject({ status: 401 });
    await s.others.check();
  });

  it("closes a softphone opened with an agent token (4401) within a second of the token's revoke", async () => {
    const s = stage();
    const owner = new Api(s.openOn, s.account.apiKey);
    const minted = await owner.post("/v1/auth/agent-tokens", { name: "softphone" });
    expect(minted.status).toBe(201);
    const { agentId } = await agentWithNumber(owner);
    const callId = await answeredCall(owner, agentId);
    const phone = await Softphone.connect(s.openOn, callId, minted.body.agent_token);
    await phone.next((f) => f.type === "status");
    let revokedAt = Infinity;
    const closed = closing(phone, () => revokedAt);
    revokedAt = await revoke(s, `/v1/auth/agent-tokens/${minted.body.token_id}`);
    const { code, afterMs } = await closed;
    expect(code).toBe(CREDENTIAL_REVOKED);
    expect(afterMs).toBeLessThan(1_000);
    await expect(Softphone.connect(s.openOn, callId, minted.body.agent_token)).rejects.toMatchObject({ status: 401 });
    // The call itself is the account's, and goes on: the owner's key still reaches it.
    expect((await owner.get(`/v1/calls/${callId}`)).body.status).toBe("in-progress");
    await s.others.check();
  });

  it("refuses a relay ticket minted before its key was revoked", async () => {
    const s = stage();
    const { key, keyId } = await spareKey(s);
    const { agentId } = await agentWithNumber(new Api(s.openOn, s.account.apiKey));
    const ticket = await new Api(s.openOn, key).post("/v1/events/ws/ticket", { agent_id: agentId });
    expect(ticket.status).toBe(201);
    await revoke(s, `/v1/auth/keys/${keyId}`);
    await expect(RelayClient.connectUrl(ticket.body.url)).rejects.toMatchObject({ status: 401 });
    // A ticket from a live key still opens the relay.
    const live = await new Api(s.openOn, s.account.apiKey).post("/v1/events/ws/ticket", { agent_id: agentId });
    const relay = await RelayClient.connectUrl(live.body.url);
    await relay.next((f) => f.type === "ready");
    await relay.close();
    await s.others.check();
  });

  it("ends a wait_for_event in flight within a second of the key's revoke, saying so, and takes nothing after", async () => {
    const s = stage();
    const { key, keyId } = await spareKey(s);
    const owner = new Api(s.openOn, s.account.apiKey);
    const { agentId, phoneNumber } = await agentWithNumber(owner);
    const mcp = await httpMcp(s.openOn, key);
    try {
      let revokedAt = Infinity;
      const waiting = mcp.client.callTool({ name: "wait_for_event", arguments: { agent_id: agentId, timeout_seconds: 30 } }).then((result) => ({
        result: result as CallToolResult,
        afterMs: Math.max(0, performance.now() - revokedAt),
      }));
      // The wait is in flight (it looks again every second with nothing announced).
      await new Promise((resolve) => setTimeout(resolve, 500));
      revokedAt = await revoke(s, `/v1/auth/keys/${keyId}`);
      const { result, afterMs } = await waiting;
      expect(afterMs).toBeLessThan(1_000);
      expect(result.isError).toBe(true);
      const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
      expect(text).toMatch(/^unauthorized \(Unauthorized\): The API key or agent_token of this connection was revoked/);
      // An event arriving now stays pending for the account's live credentials.
      const sms = await owner.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550180", text: "after the revoke" });
      expect(sms.status).toBe(201);
      const pending = await owner.get("/v1/events/peek", { query: { agent_id: agentId } });
      expect(pending.body.data.map((e: any) => e.payload.text)).toEqual(["after the revoke"]);
    } finally {
      await mcp.close();
    }
    await s.others.check();
  });
}

describe("revoking a credential with things open, on one process", () => {
  let service: TestService;
  let stage: Stage;
  beforeAll(async () => {
    service = await startTestService();
    stage = { openOn: service.baseUrl, revokeOn: service.baseUrl, account: await createAccount(service.core), others: await bystander(service) };
  });
  afterAll(() => service?.stop());

  scenarios(() => stage);
});

describe.runIf(onPostgres)("revoking a credential on one process with things open on another (PostgreSQL)", () => {
  let processes: TwoProcesses;
  let handle: DatabaseHandle;
  let stage: Stage;
  beforeAll(async () => {
    processes = await twoProcesses({});
    handle = await openDatabase({ url: processes.url, dataDir: "unused", logger: createLogger("silent") });
    stage = {
      openOn: processes.a.baseUrl,
      revokeOn: processes.b.baseUrl,
      account: processes.account,
      others: await bystander({ core: { db: handle.db }, baseUrl: processes.a.baseUrl }),
    };
  }, 120_000);
  afterAll(async () => {
    await handle?.close();
    await processes?.stop();
  });

  scenarios(() => stage);

  it("drops a revoked agent token from the other process's cache at once", async () => {
    const owner = new Api(stage.openOn, stage.account.apiKey);
    const minted = await owner.post("/v1/auth/agent-tokens", {});
    // Process A checks the token and caches it.
    const onA = new Api(stage.openOn, minted.body.agent_token);
    expect((await onA.get("/v1/x402/numbers")).status).toBe(200);
    await revoke(stage, `/v1/auth/agent-tokens/${minted.body.token_id}`);
    await expect.poll(async () => (await onA.get("/v1/x402/numbers", { unchecked: true })).status, { timeout: 1_000, interval: 50 }).toBe(401);
    await stage.others.check();
  });
});
