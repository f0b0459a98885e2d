import { auth, extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { connectWithOAuth, FormBrowser, startCallbackServer, TestOAuthClient, tokensFor } from "../support/oauth.js";
import { startTestService, type TestService } from "../support/service.js";
import { startSmtpServer } from "../support/smtp.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";

let service: TestService;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let callback: Awaited<ReturnType<typeof startCallbackServer>>;
let account: TestAccount;
let api: Api;
let person: FormBrowser;
let mcpUrl: string;
let mine: { agentId: string; numberId: string; phoneNumber: string };
let other: { agentId: string; numberId: string; phoneNumber: string };

beforeAll(async () => {
  smtp = await startSmtpServer();
  [service, callback] = await Promise.all([startTestService({ env: { SMTP_URL: smtp.url } }), startCallbackServer()]);
  mcpUrl = `${service.baseUrl}/mcp`;
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
  mine = await agentWithNumber(api, { name: "Mine" });
  other = await agentWithNumber(api, { name: "Other" });
  person = new FormBrowser(service.baseUrl);
});
afterAll(async () => {
  await callback?.close();
  await service?.stop();
  await smtp?.close();
});

const who = (extra: { agentId?: string } = {}) => ({ email: account.email, smtp, ...extra });

/** A raw tools/call on /mcp, as the HTTP answer it gets. */
async function callTool(token: string, name: string, args: Record<string, unknown> = {}) {
  const res = await fetch(mcpUrl, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, accept: "application/json, text/event-stream", "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  });
  const text = await res.text();
  const body = text ? JSON.parse(text) : undefined;
  const result = body?.result as CallToolResult | undefined;
  return {
    status: res.status,
    headers: res.headers,
    body,
    result,
    data: result?.structuredContent as any,
    error: result?.isError ? String((result.content[0] as { text: string }).text) : undefined,
  };
}

describe("scopes and step-up", () => {
  it("answers a read-only token's place_call with 403 insufficient_scope, places nothing, and steps up when the person allows", async () => {
    const provider = new TestOAuthClient(callback.url, { clientName: "Reader" });
    const tokens = await tokensFor(mcpUrl, provider, person, who(), "agentline:read");
    expect(tokens.scope).toBe("agentline:read");
    expect((await callTool(tokens.access_token, "list_agents")).status).toBe(200);
    const callsBefore = (await api.get("/v1/calls")).body.data.length;

    const refused = await callTool(tokens.access_token, "place_call", { agent_id: mine.agentId, to_number: "+15005550006" });
    expect(refused.status).toBe(403);
    expect(refused.headers.get("www-authenticate")).toBe(
      `Bearer realm="agentline", error="insufficient_scope", scope="agentline:read agentline:spend", resource_metadata="${service.baseUrl}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(refused.body).toMatchObject({ status: 403, code: "insufficient_scope" });
    expect((await api.get("/v1/calls")).body.data.length).toBe(callsBefore);
    // Nor a change that spends nothing: that takes agentline:write.
    expect((await callTool(tokens.access_token, "create_agent", { name: "Nope" })).headers.get("www-authenticate")).toContain(
      'scope="agentline:read agentline:write"',
    );

    // The step-up, from that header: the SDK's auth() asks for its scope, the person allows the
    // added one, and the call goes through. (The SDK's transport, holding a refresh token,
    // refreshes instead, which cannot widen a grant; a client re-authorizes as here.)
    const { scope } = extractWWWAuthenticateParams(new Response(null, { status: 403, headers: refused.headers }));
    provider.saved = undefined;
    expect(await auth(provider, { serverUrl: mcpUrl, scope })).toBe("REDIRECT");
    expect(provider.authorizationUrl!.searchParams.get("scope")).toBe("agentline:read agentline:spend");
    const landed = await person.authorize(provider.authorizationUrl!.href, who());
    expect(await auth(provider, { serverUrl: mcpUrl, authorizationCode: (landed as URL).searchParams.get("code")! })).toBe("AUTHORIZED");
    expect(provider.saved!.scope).toBe("agentline:read agentline:spend");
    const upscoped = await connectWithOAuth(mcpUrl, provider);
    const placed = (await upscoped.callTool({ name: "place_call", arguments: { agent_id: mine.agentId, to_number: "+15005550006" } })) as CallToolResult;
    expect(placed.isError ?? false).toBe(false);
    await upscoped.close();
    // Still one connection for the client: the step-up added to its grant.
    const connections = (await api.get("/v1/auth/connections")).body.data.filter((c: { client_name: string }) => c.client_name === "Reader");
    expect(connections).toHaveLength(1);
    expect(connections[0].scopes).toEqual(["agentline:read", "agentline:spend"]);
  });
});

describe("a grant limited to one agent", () => {
  let token: string;
  let otherCall: string;

  beforeAll(async () => {
    otherCall = await answeredCall(api, other.agentId);
    const tokens = await tokensFor(mcpUrl, new TestOAuthClient(callback.url, { clientName: "One agent" }), person, who({ agentId: mine.agentId }));
    token = tokens.access_token;
  });

  it("lists only that agent, and its own calls, numbers and events", async () => {
    expect((await callTool(token, "list_agents")).data.data.map((a: { agent_id: string }) => a.agent_id)).toEqual([mine.agentId]);
    const call = await callTool(token, "place_call", { agent_id: mine.agentId, to_number: "+14155550142" });
    expect(call.error).toBeUndefined();
    // Each agent's caller says something: an event pending for each.
    expect((await callTool(token, "simulate_caller_speech", { call_id: call.data.call_id, text: "Hello, mine" })).error).toBeUndefined();
    expect((await api.post(`/v1/sandbox/calls/${otherCall}/say`, { text: "Hello, other" })).status).toBeLessThan(300);
    const calls = (await callTool(token, "list_calls")).data.data;
    expect(calls.map((c: { call_id: string }) => c.call_id)).toContain(call.data.call_id);
    expect(calls.every((c: { agent_id: string }) => c.agent_id === mine.agentId)).toBe(true);
    expect((await callTool(token, "list_numbers")).data.data.map((n: { number_id: string }) => n.number_id)).toEqual([mine.numberId]);
    // The other agent's call has events pending too; the wait hands over this agent's alone.
    const waited = (await callTool(token, "wait_for_event", { timeout_seconds: 5, limit: 100 })).data;
    expect(waited.events.length).toBeGreaterThan(0);
    expect(waited.events.every((e: { agent_id: string }) => e.agent_id === mine.agentId)).toBe(true);
    expect((await callTool(token, "peek_events", { limit: 100 })).data.data.every((e: { agent_id: string }) => e.agent_id === mine.agentId)).toBe(true);
    expect((await api.get("/v1/events/peek", { query: { agent_id: other.agentId } })).body.data.length).toBeGreaterThan(0);
  });

  it("answers another agent's id, call and number exactly as another account's: not found", async () => {
    const cases: Array<[string, Record<string, unknown>]> = [
      ["get_agent", { agent_id: other.agentId }],
      ["place_call", { agent_id: other.agentId, to_number: "+15005550006" }],
      ["list_calls", { agent_id: other.agentId }],
      ["get_call", { call_id: otherCall }],
      ["get_transcript", { call_id: otherCall }],
      ["hang_up_call", { call_id: otherCall }],
      ["get_number", { number_id: other.numberId }],
      ["release_number", { number_id: other.numberId }],
      ["reassign_number", { number_id: mine.numberId, agent_id: other.agentId }],
      ["wait_for_event", { agent_id: other.agentId, timeout_seconds: 0 }],
      ["wait_for_event", { call_id: otherCall, timeout_seconds: 0 }],
      ["get_webhook", { agent_id: other.agentId }],
      ["set_webhook", { agent_id: other.agentId, url: "https://example.com/hook" }],
      ["simulate_caller_hangup", { call_id: otherCall }],
      ["simulate_inbound_text", { to_number: other.phoneNumber, from_number: "+15005550006", text: "hi" }],
      ["send_text", { agent_id: other.agentId, to_number: "+15005550006", text: "hi" }],
    ];
    for (const [tool, args] of cases) {
      const answer = await callTool(token, tool, args);
      expect(answer.status, tool).toBe(200);
      expect(answer.error, tool).toMatch(/^not_found/);
    }
    // Nothing happened to the other agent's things.
    expect((await api.get(`/v1/calls/${otherCall}`)).body.status).toBe("in-progress");
    expect((await api.get(`/v1/numbers/${other.numberId}`)).body).toMatchObject({ agent_id: other.agentId, status: "active" });
    expect((await api.get(`/v1/numbers/${mine.numberId}`)).body.agent_id).toBe(mine.agentId);
    expect((await api.get("/v1/messages", { query: { agent_id: other.agentId } })).body.data).toEqual([]);
  });

  it("refuses what acts on the whole account", async () => {
    for (const tool of ["create_agent", "set_default_voice", "list_transactions"]) {
      const args = tool === "create_agent" ? { name: "New" } : tool === "set_default_voice" ? { voice_id: "mark" } : {};
      expect((await callTool(token, tool, args)).error, tool).toMatch(/^forbidden/);
    }
    expect((await api.get("/v1/agents")).body.data).toHaveLength(2);
  });

  it("shows the limit in the account's list of connections", async () => {
    const listed = (await api.get("/v1/auth/connections")).body.data.find((c: { client_name: string }) => c.client_name === "One agent");
    expect(listed).toMatchObject({
      agent_id: mine.agentId,
      scopes: ["agentline:read", "agentline:write", "agentline:spend"],
      redirect_host: `127.0.0.1:${callback.port}`,
    });
    expect(listed.last_used_at).not.toBeNull();
  });
});

describe("connections: listed, disconnected, revoked", () => {
  it("disconnects a client at once: its access and refresh tokens are refused", async () => {
    const provider = new TestOAuthClient(callback.url, { clientName: "To disconnect" });
    const tokens = await tokensFor(mcpUrl, provider, person, who());
    expect((await callTool(tokens.access_token, "list_agents")).status).toBe(200);
    const listed = (await api.get("/v1/auth/connections")).body.data.find((c: { client_name: string }) => c.client_name === "To disconnect");
    expect(listed).toMatchObject({
      client_id: provider.information!.client_id,
      agent_id: null,
      scopes: ["agentline:read", "agentline:write", "agentline:spend"],
    });
    expect(Date.parse(listed.created_at)).toBeLessThanOrEqual(Date.now());

    // Another account cannot see or end it.
    const stranger = await createAccount(service.core);
    expect((await api.withKey(stranger.apiKey).delete(`/v1/auth/connections/${listed.connection_id}`)).status).toBe(404);
    expect((await api.withKey(stranger.apiKey).get("/v1/auth/connections")).body.data).toEqual([]);
    expect((await callTool(tokens.access_token, "list_agents")).status).toBe(200);

    const gone = await api.delete(`/v1/auth/connections/${listed.connection_id}`);
    expect(gone.status).toBe(200);
    expect(gone.body).toMatchObject({ connection_id: listed.connection_id, disconnected: true });
    const refused = await callTool(tokens.access_token, "list_agents");
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toMatch(/^Bearer realm="agentline", error="invalid_token", resource_metadata="/);
    const refresh = await fetch(`${service.baseUrl}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", client_id: provider.information!.client_id, refresh_token: tokens.refresh_token! }).toString(),
    });
    expect(refresh.status).toBe(400);
    expect(((await refresh.json()) as { error: string }).error).toBe("invalid_grant");
    expect((await api.get("/v1/auth/connections")).body.data.map((c: { connection_id: string }) => c.connection_id)).not.toContain(listed.connection_id);
    expect((await api.delete(`/v1/auth/connections/${listed.connection_id}`)).status).toBe(404);
  });

  it("ends a wait_for_event held open with the connection's token when the connection ends", async () => {
    const provider = new TestOAuthClient(callback.url, { clientName: "Waiting" });
    const tokens = await tokensFor(mcpUrl, provider, person, who());
    const started = Date.now();
    const waiting = callTool(tokens.access_token, "wait_for_event", { agent_id: mine.agentId, event_types: ["sms.received"], timeout_seconds: 30 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const listed = (await api.get("/v1/auth/connections")).body.data.find((c: { client_name: string }) => c.client_name === "Waiting");
    expect((await api.delete(`/v1/auth/connections/${listed.connection_id}`)).status).toBe(200);
    const answer = await waiting;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(answer.error).toMatch(/^unauthorized .*OAuth client: its connection was ended/);
  });

  it("ends the connection when the client revokes its refresh token (RFC 7009)", async () => {
    const provider = new TestOAuthClient(callback.url, { clientName: "Revokes itself" });
    const tokens = await tokensFor(mcpUrl, provider, person, who());
    const revoked = await fetch(`${service.baseUrl}/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: tokens.refresh_token!, token_type_hint: "refresh_token", client_id: provider.information!.client_id }).toString(),
    });
    expect(revoked.status).toBe(200);
    expect((await callTool(tokens.access_token, "list_agents")).status).toBe(401);
    expect((await api.get("/v1/auth/connections")).body.data.map((c: { client_name: string }) => c.client_name)).not.toContain("Revokes itself");
  });
});

describe("an access token past its lifetime", () => {
  let short: TestService;
  beforeAll(async () => {
    short = await startTestService({ env: { SMTP_URL: smtp.url, OAUTH_ACCESS_TOKEN_TTL_S: "2" } });
  });
  afterAll(() => short?.stop());

  it("is a 401 at /mcp, and the client's refresh gets a new one", async () => {
    const url = `${short.baseUrl}/mcp`;
    const holder = await createAccount(short.core);
    const provider = new TestOAuthClient(callback.url, { clientName: "Short-lived" });
    const tokens = await tokensFor(url, provider, new FormBrowser(short.baseUrl), { email: holder.email, smtp });
    expect(tokens.expires_in).toBeLessThanOrEqual(2);
    const call = (token: string) =>
      fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, accept: "application/json, text/event-stream", "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_agents", arguments: {} } }),
      });
    expect((await call(tokens.access_token)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const expired = await call(tokens.access_token);
    expect(expired.status).toBe(401);
    expect(expired.headers.get("www-authenticate")).toMatch(/^Bearer realm="agentline", error="invalid_token", resource_metadata="/);
    // The SDK refreshes on the 401 and carries on.
    const client = await connectWithOAuth(url, provider);
    expect(((await client.callTool({ name: "list_agents", arguments: {} })) as CallToolResult).isError ?? false).toBe(false);
    expect(provider.saved!.access_token).not.toBe(tokens.access_token);
    await client.close();
  });
});
