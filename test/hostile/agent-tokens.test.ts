import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { eq, sql } from "drizzle-orm";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { authenticateAgentToken } from "../../core/auth/agent-tokens.js";
import { hashToken, randomToken } from "../../core/auth/tokens.js";
import { loadConfig } from "../../core/config.js";
import { migrationsFolder } from "../../core/db/paths.js";
import { agentTokens } from "../../core/db/schema/agent-tokens.js";
import { paymentSettlements } from "../../core/db/schema/payment-settlements.js";
import { createLogger } from "../../core/logger.js";
import { startServer } from "../../gateway/server.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { type Bystander, bystander } from "../support/bystander.js";
import { adminUrl, databaseUrl } from "../support/postgres.js";
import { onPostgres, startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";
import { newWallet, paidRequest, type Sent, x402Fetch } from "../support/wallet.js";

let service: TestService;
let others: Bystander;
let realNow: () => Date;
beforeAll(async () => {
  service = await startTestService();
  others = await bystander(service);
  realNow = service.core.now;
});
afterEach(async () => {
  service.core.now = realNow;
  await others.check();
});
afterAll(() => service?.stop());

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
const mcpHeaders = { accept: "application/json, text/event-stream" };

/** An account with an API key, and an agent token minted with it. */
async function keyAndToken(name = "bot") {
  const account = await createAccount(service.core);
  const keyed = new Api(service.baseUrl, account.apiKey);
  const minted = await keyed.post("/v1/auth/agent-tokens", { name });
  expect(minted.status).toBe(201);
  return { account, keyed, token: minted.body.agent_token as string, tokenId: minted.body.token_id as string, minted: minted.body };
}

describe("agent tokens minted with an API key", () => {
  it("are minted only by the explicit endpoint: random, shown once, listed with prefix, last four and the key that minted them", async () => {
    const { account, keyed, token, minted } = await keyAndToken();
    expect(token).toMatch(/^at_[0-9A-Za-z]{43}$/);
    expect(minted.token_id).toMatch(/^atk_/);
    expect(minted).toMatchObject({
      name: "bot",
      prefix: token.slice(0, 7),
      last_four: token.slice(-4),
      minted_by: { kind: "api_key", id: account.keyId },
      last_used_at: null,
      current: false,
    });
    const second = await keyed.post("/v1/auth/agent-tokens");
    expect(second.status).toBe(201);
    expect(second.body.agent_token).not.toBe(token);

    const listed = await keyed.get("/v1/auth/agent-tokens");
    expect(listed.body.data.map((t: any) => t.token_id)).toEqual([second.body.token_id, minted.token_id]);
    expect(listed.text).not.toContain(token);
    expect(listed.body.data[1]).toEqual({ ...minted, agent_token: undefined });
    // A page at a time, newest first.
    const firstPage = await keyed.get("/v1/auth/agent-tokens?limit=1");
    expect(firstPage.body).toMatchObject({ data: [{ token_id: second.body.token_id }], has_more: true });
    const lastPage = await keyed.get("/v1/auth/agent-tokens?limit=1&offset=1");
    expect(lastPage.body).toMatchObject({ data: [{ token_id: minted.token_id }], has_more: false });

    // Used once, it shows when; listed through itself, it is the current one.
    expect((await new Api(service.baseUrl, token).get("/v1/x402/numbers")).status).toBe(200);
    const seen = await new Api(service.baseUrl, token).get("/v1/auth/agent-tokens");
    const self = seen.body.data.find((t: any) => t.token_id === minted.token_id);
    expect(self).toMatchObject({ current: true, last_used_at: expect.any(String) });
    expect(seen.body.data.find((t: any) => t.token_id === second.body.token_id).current).toBe(false);
  });

  it("once revoked, answer 401 on /mcp, /v1/x402, the sandbox and the softphone, are no longer listed, and a second revoke is a 404", async () => {
    const { keyed, token, tokenId } = await keyAndToken();
    const { agentId } = await agentWithNumber(keyed);
    const callId = await answeredCall(keyed, agentId);
    const phone = await Softphone.connect(service.baseUrl, callId, token);
    await phone.next((f) => f.type === "status");
    await phone.close();
    expect((await keyed.post("/mcp", initialize, { key: token, headers: mcpHeaders })).status).toBe(200);

    const revoked = await keyed.delete(`/v1/auth/agent-tokens/${tokenId}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toEqual({ token_id: tokenId, revoked: true, revoked_at: expect.any(String) });

    const wallet = new Api(service.baseUrl, token);
    expect((await wallet.get("/v1/x402/numbers")).status).toBe(401);
    expect((await wallet.post(`/v1/sandbox/calls/${callId}/say`, { text: "still here?" })).status).toBe(401);
    expect((await keyed.post("/mcp", initialize, { key: token, headers: mcpHeaders })).status).toBe(401);
    await expect(Softphone.connect(service.baseUrl, callId, token)).rejects.toMatchObject({ status: 401 });
    expect((await keyed.get("/v1/auth/agent-tokens")).body.data).toEqual([]);
    const again = await keyed.delete(`/v1/auth/agent-tokens/${tokenId}`);
    expect(again.status).toBe(404);
    expect(again.body.detail).toBe(`No agent token with id "${tokenId}" exists on this account.`);
  });

  it("rotate: the new token works and is shown once, the old is revoked in the same step; a token may rotate itself", async () => {
    const { account, keyed, token, tokenId } = await keyAndToken("rotating");
    const rotated = await keyed.post(`/v1/auth/agent-tokens/${tokenId}/rotate`);
    expect(rotated.status).toBe(201);
    expect(rotated.body).toMatchObject({ name: "rotating", minted_by: { kind: "api_key", id: account.keyId }, agent_token: expect.stringMatching(/^at_/) });
    expect(rotated.body.token_id).not.toBe(tokenId);
    expect((await new Api(service.baseUrl, token).get("/v1/x402/numbers")).status).toBe(401);
    const fresh = new Api(service.baseUrl, rotated.body.agent_token);
    expect((await fresh.get("/v1/x402/numbers")).status).toBe(200);
    expect((await keyed.get("/v1/auth/agent-tokens")).body.data.map((t: any) => t.token_id)).toEqual([rotated.body.token_id]);
    // Rotating a revoked token is a 404: nothing is minted.
    const revoked = await keyed.post(`/v1/auth/agent-tokens/${tokenId}/rotate`);
    expect(revoked.status).toBe(404);
    expect(revoked.body.detail).toBe(`No agent token with id "${tokenId}" exists on this account.`);

    const again = await fresh.post(`/v1/auth/agent-tokens/${rotated.body.token_id}/rotate`);
    expect(again.status).toBe(201);
    expect(again.body.minted_by).toEqual({ kind: "agent_token", id: rotated.body.token_id });
    expect((await fresh.get("/v1/x402/numbers")).status).toBe(401);
    expect((await new Api(service.baseUrl, again.body.agent_token).get("/v1/x402/numbers")).status).toBe(200);
  });

  it("refuse to let a token revoke itself (409), and another account's token is a 404 that leaves it working", async () => {
    const mine = await keyAndToken();
    const theirs = await keyAndToken();
    const self = await new Api(service.baseUrl, mine.token).delete(`/v1/auth/agent-tokens/${mine.tokenId}`);
    expect(self.status).toBe(409);
    expect(self.body.code).toBe("cannot_revoke_current_key");
    // It names the way out: another credential, or rotating.
    expect(self.body.detail).toMatch(/another credential .*\/rotate/);
    expect((await mine.keyed.delete(`/v1/auth/agent-tokens/${theirs.tokenId}`)).status).toBe(404);
    expect((await mine.keyed.post(`/v1/auth/agent-tokens/${theirs.tokenId}/rotate`)).status).toBe(404);
    expect((await new Api(service.baseUrl, mine.token).delete(`/v1/auth/agent-tokens/${theirs.tokenId}`)).status).toBe(404);
    expect((await new Api(service.baseUrl, theirs.token).get("/v1/x402/numbers")).status).toBe(200);
    expect((await theirs.keyed.get("/v1/auth/agent-tokens")).body.data.map((t: any) => t.token_id)).toEqual([theirs.tokenId]);
  });

  it("write last_used_at on first use, then again only once more than 60 s have passed, however long after", async () => {
    const { token, tokenId } = await keyAndToken();
    const lastUsed = async () => (await service.core.db.select().from(agentTokens).where(eq(agentTokens.tokenId, tokenId)))[0]!.lastUsedAt?.getTime();
    const t0 = Date.parse("2030-01-01T00:00:00Z");
    service.core.now = () => new Date(t0);
    await authenticateAgentToken(service.core, token);
    expect(await lastUsed()).toBe(t0);
    service.core.now = () => new Date(t0 + 60_000);
    await authenticateAgentToken(service.core, token);
    expect(await lastUsed()).toBe(t0);
    service.core.now = () => new Date(t0 + 60_001);
    await authenticateAgentToken(service.core, token);
    expect(await lastUsed()).toBe(t0 + 60_001);
    service.core.now = () => new Date(t0 + 3_600_000);
    await authenticateAgentToken(service.core, token);
    expect(await lastUsed()).toBe(t0 + 3_600_000);
  });
});

describe("agent tokens and payments", () => {
  const topup = (pay: typeof fetch, headers: Record<string, string> = {}) =>
    pay(`${service.baseUrl}/v1/billing/topup/x402/pay?amount=1`, { method: "POST", headers }).then(async (res) => ({
      status: res.status,
      body: (await res.json()) as any,
    }));

  it("a top-up with no credential mints one for the wallet; with that token, the same one back; with an API key, none", async () => {
    const wallet = newWallet();
    const pay = x402Fetch(wallet);
    const first = await topup(pay);
    expect(first.status).toBe(200);
    expect(first.body.agent_token).toMatch(/^at_/);
    const listed = await new Api(service.baseUrl, first.body.agent_token).get("/v1/auth/agent-tokens");
    expect(listed.body.data).toEqual([expect.objectContaining({ minted_by: { kind: "wallet", id: wallet.address }, current: true })]);

    const withToken = await topup(pay, { authorization: `Bearer ${first.body.agent_token}` });
    expect(withToken.status).toBe(200);
    expect(withToken.body).toMatchObject({ agent_token: first.body.agent_token, account_id: first.body.account_id, balance: "2.000000" });
    expect((await new Api(service.baseUrl, first.body.agent_token).get("/v1/auth/agent-tokens")).body.data).toHaveLength(1);

    const owner = await createAccount(service.core);
    const withKey = await topup(x402Fetch(newWallet()), { authorization: `Bearer ${owner.apiKey}` });
    expect(withKey.status).toBe(200);
    expect(withKey.body).toMatchObject({ account_id: owner.accountId, agent_token: null });
    expect((await new Api(service.baseUrl, owner.apiKey).get("/v1/auth/agent-tokens")).body.data).toEqual([]);
  });

  it("a retry with the same payment answers the same token, which the stored answer keeps only sealed", async () => {
    for (const path of ["/v1/billing/topup/x402/pay?amount=1", "/v1/x402/calls/call_00000000000000000000000000/transcript"]) {
      const sent: Sent = [];
      const first = await x402Fetch(newWallet(), undefined, sent)(`${service.baseUrl}${path}`, { method: path.includes("topup") ? "POST" : "GET" });
      const firstBody = (await first.json()) as any;
      const token: string = firstBody.agent_token ?? firstBody.payment.agent_token;
      expect(token).toMatch(/^at_/);
      const paid = paidRequest(sent);
      const retried = await fetch(paid.url, { method: paid.method, headers: paid.headers });
      expect(retried.headers.get("idempotent-replayed")).toBe("true");
      const retriedBody = (await retried.json()) as any;
      expect(retriedBody.agent_token ?? retriedBody.payment.agent_token).toBe(token);
      const settlements = await service.core.db.select().from(paymentSettlements);
      expect(JSON.stringify(settlements)).not.toContain(token);
      expect((await new Api(service.baseUrl, token).get("/v1/auth/agent-tokens")).status).toBe(200);
    }
  });

  it("a paid request refused after its payment mints a token only while the wallet's account has none", async () => {
    const wallet = newWallet();
    const pay = x402Fetch(wallet);
    const refused = async () => (await (await pay(`${service.baseUrl}/v1/x402/calls/call_00000000000000000000000000/transcript`)).json()) as any;
    const first = await refused();
    expect(first.code).toBe("not_found");
    expect(first.payment.agent_token).toMatch(/^at_/);
    const second = await refused();
    expect(second.code).toBe("not_found");
    expect(second.payment).toMatchObject({ agent_token: null, balance: "0.002000", detail: expect.stringContaining("GET /v1/auth/agent-tokens") });
    const listed = await new Api(service.baseUrl, first.payment.agent_token).get("/v1/auth/agent-tokens");
    expect(listed.body.data).toHaveLength(1);
  });
});

/** A database migrated up to 0010 (before agent tokens had a table of their own), on PGlite or PostgreSQL. */
async function databaseBefore0011() {
  const folder = mkdtempSync(join(tmpdir(), "agentline-migrations-"));
  mkdirSync(join(folder, "meta"));
  const journal = JSON.parse(readFileSync(join(migrationsFolder, "meta", "_journal.json"), "utf8"));
  journal.entries = journal.entries.filter((e: { idx: number }) => e.idx <= 10);
  writeFileSync(join(folder, "meta", "_journal.json"), JSON.stringify(journal));
  for (const file of readdirSync(migrationsFolder).filter((f) => /^00(0\d|10)_.*\.sql$/.test(f)))
    copyFileSync(join(migrationsFolder, file), join(folder, file));
  try {
    if (onPostgres) {
      const name = `agentline_m_${Date.now().toString(36)}`;
      const admin = postgres(adminUrl()!, { max: 1, onnotice: () => {} });
      await admin.unsafe(`create database ${name}`);
      await admin.end();
      const client = postgres(databaseUrl(name), { max: 1, onnotice: () => {} });
      const db = drizzlePostgres(client);
      await migratePostgres(db, { migrationsFolder: folder });
      return {
        run: (statement: ReturnType<typeof sql>) => db.execute(statement),
        start: async () => {
          await client.end();
          const started = await startTestService({ databaseUrl: databaseUrl(name) });
          return {
            ...started,
            async stop() {
              await started.stop();
              const dropper = postgres(adminUrl()!, { max: 1, onnotice: () => {} });
              await dropper.unsafe(`drop database if exists ${name} with (force)`);
              await dropper.end();
            },
          };
        },
      };
    }
    const pglite = await PGlite.create();
    const db = drizzlePglite(pglite);
    await migratePglite(db, { migrationsFolder: folder });
    return {
      run: (statement: ReturnType<typeof sql>) => db.execute(statement),
      start: async () => {
        const config = loadConfig({ PORT: "0", LOG_LEVEL: "silent", DATA_DIR: "memory://" });
        const running = await startServer(config, { logger: createLogger("silent"), pglite });
        return { ...running, stop: () => running.close() };
      },
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

describe("agent tokens issued before they were listed", () => {
  it("keep working after migration 0011, are listed as the wallet's, get their last four at first use, and can be rotated", async () => {
    const before = await databaseBefore0011();
    // As the old code issued it: only its hash, on the account.
    const legacy = randomToken("at_");
    const address = "0x00000000000000000000000000000000000000a1";
    await before.run(
      sql`insert into accounts (account_id, wallet_address, agent_token_hash, balance_micros) values ('acct_legacy', ${address}, ${hashToken(legacy)}, 0)`,
    );
    const upgraded = await before.start();
    try {
      // The wallet's balance is empty: the paid routes answer 402 (not 401) to a token they take.
      const wallet = new Api(upgraded.baseUrl, legacy);
      expect((await wallet.get("/v1/x402/numbers")).body.code).toBe("insufficient_balance");
      const listed = await wallet.get("/v1/auth/agent-tokens");
      expect(listed.status).toBe(200);
      const [token] = listed.body.data;
      expect(token).toMatchObject({ prefix: legacy.slice(0, 7), last_four: legacy.slice(-4), minted_by: { kind: "wallet", id: address }, current: true });
      const rotated = await wallet.post(`/v1/auth/agent-tokens/${token.token_id}/rotate`);
      expect(rotated.status).toBe(201);
      expect((await wallet.get("/v1/x402/numbers")).status).toBe(401);
      expect((await new Api(upgraded.baseUrl, rotated.body.agent_token).get("/v1/auth/agent-tokens")).status).toBe(200);
    } finally {
      await upgraded.stop();
    }
  });
});
