import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { projectRoot } from "../../harness/process.js";
import { httpMcp } from "../support/mcp.js";
import { startTestService, type TestService } from "../support/service.js";
import { newWallet, x402Fetch } from "../support/wallet.js";

let service: TestService;
let api: Api;

beforeAll(async () => {
  service = await startTestService();
  api = new Api(service.baseUrl);
});
afterAll(() => service?.stop());

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};
const mcpHeaders = { accept: "application/json, text/event-stream" };

describe("who may use /mcp", () => {
  it("answers no key, an unknown key and a revoked key with 401 and WWW-Authenticate", async () => {
    const account = await createAccount(service.core);
    const spare = await api.withKey(account.apiKey).post("/v1/auth/keys", { name: "spare" });
    expect(spare.status).toBe(201);
    // A session opened with the key works until the key is revoked: every request is checked.
    const before = await httpMcp(service.baseUrl, spare.body.api_key);
    expect((await before.ok("list_agents")).data).toEqual([]);
    expect((await api.withKey(account.apiKey).delete(`/v1/auth/keys/${spare.body.key_id}`)).status).toBe(200);

    for (const key of [undefined, "sk_not_a_real_key", spare.body.api_key, "at_not_a_real_token"]) {
      const res = await api.post("/mcp", initialize, { key, headers: mcpHeaders });
      expect(res.status, String(key)).toBe(401);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      // The challenge also tells an OAuth client where to sign in (RFC 9728).
      const oauth = `resource_metadata="${service.baseUrl}/.well-known/oauth-protected-resource/mcp", scope="agentline:read agentline:write agentline:spend"`;
      expect(res.headers.get("www-authenticate")).toBe(
        key ? `Bearer realm="agentline", error="invalid_token", ${oauth}` : `Bearer realm="agentline", ${oauth}`,
      );
    }
    await expect(before.client.callTool({ name: "list_agents", arguments: {} })).rejects.toThrow(/401/);
    await expect(httpMcp(service.baseUrl, spare.body.api_key)).rejects.toThrow(/401/);
  });

  it("is stateless: GET and DELETE are 405, so clients open no stream and no session", async () => {
    const account = await createAccount(service.core);
    for (const method of ["GET", "DELETE"]) {
      const res = await api.request(method, "/mcp", { key: account.apiKey, headers: mcpHeaders });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
    }
    const res = await api.post("/mcp", initialize, { key: account.apiKey, headers: mcpHeaders });
    expect(res.status).toBe(200);
    expect(res.headers.get("mcp-session-id")).toBeNull();
    expect(res.body.result.serverInfo.name).toBe("agentline");
  });

  it("gives an agent_token exactly its wallet's account", async () => {
    const account = await createAccount(service.core);
    const keyed = await httpMcp(service.baseUrl, account.apiKey);
    const theirs = await keyed.ok("create_agent", { name: "Keyed account's agent" });

    // A wallet with no account pays for a top-up and gets its token.
    const wallet = newWallet();
    const res = await x402Fetch(wallet)(`${service.baseUrl}/v1/billing/topup/x402/pay?amount=5`, { method: "POST" });
    expect(res.status).toBe(200);
    const { agent_token } = (await res.json()) as { agent_token: string };

    const walletMcp = await httpMcp(service.baseUrl, agent_token);
    try {
      expect((await walletMcp.ok("get_balance")).balance).toBe("5.000000");
      expect((await walletMcp.ok("list_agents")).data).toEqual([]);
      const agent = await walletMcp.ok("create_agent", { name: "Wallet agent" });
      await walletMcp.ok("buy_number", { agent_id: agent.agent_id });
      expect((await walletMcp.ok("list_agents")).data.map((a: any) => a.agent_id)).toEqual([agent.agent_id]);
      expect(await walletMcp.fails("get_agent", { agent_id: theirs.agent_id })).toMatch(/^not_found/);
      expect((await keyed.ok("list_agents")).data.map((a: any) => a.agent_id)).toEqual([theirs.agent_id]);
      expect(await keyed.fails("get_agent", { agent_id: agent.agent_id })).toMatch(/^not_found/);
      // The purchase was charged to the wallet's account, not the keyed one.
      expect(Number((await walletMcp.ok("get_balance")).balance)).toBeLessThan(5);
      expect((await keyed.ok("get_balance")).balance).toBe("1000.000000");
    } finally {
      await walletMcp.close();
      await keyed.close();
    }
  });
});

describe("agentline mcp (stdio) without a good key", () => {
  const run = (env: Record<string, string>) =>
    spawnSync(process.execPath, [join(projectRoot, "dist", "bin", "agentline.js"), "mcp"], {
      env: { PATH: process.env.PATH!, DATA_DIR: "memory://", ...env },
      input: "",
      encoding: "utf8",
      timeout: 60_000,
    });

  it("refuses to start, saying why on stderr and nothing on stdout", () => {
    const missing = run({});
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("set AGENTLINE_API_KEY");
    expect(missing.stdout).toBe("");
    const unknown = run({ AGENTLINE_API_KEY: "sk_unknown" });
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain("AGENTLINE_API_KEY is not a valid API key or agent_token");
    expect(unknown.stdout).toBe("");
  });
});
