import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { launchBrowser } from "../support/browser.js";
import { authorizeInBrowser, connectWithOAuth, startCallbackServer, startLoopbackHttps, TestOAuthClient } from "../support/oauth.js";
import { startTestService, type TestService } from "../support/service.js";
import { startSmtpServer } from "../support/smtp.js";
import { agentWithNumber } from "../support/telephony.js";

let service: TestService;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let callback: Awaited<ReturnType<typeof startCallbackServer>>;
let mcpUrl: string;

beforeAll(async () => {
  smtp = await startSmtpServer();
  [service, browser, callback] = await Promise.all([
    startTestService({ env: { SMTP_URL: smtp.url, ALLOW_PRIVATE_WEBHOOKS: "1" } }),
    launchBrowser(),
    startCallbackServer(),
  ]);
  mcpUrl = `${service.baseUrl}/mcp`;
});
// Each test is another person: no sign-in carries over in the browser.
beforeEach(() => browser.context.clearCookies());
afterAll(async () => {
  await browser?.close();
  await callback?.close();
  await service?.stop();
  await smtp?.close();
});

const structured = (result: unknown) => (result as CallToolResult).structuredContent as any;

describe("an MCP client signs in with OAuth and uses the tools", () => {
  it("registers dynamically, signs the person in with an e-mail code, and calls list_agents and place_call", { timeout: 120_000 }, async () => {
    const account = await createAccount(service.core);
    const { agentId } = await agentWithNumber(new Api(service.baseUrl, account.apiKey));
    const provider = new TestOAuthClient(callback.url, { clientName: "Registered test client" });

    // First contact, as a client app makes it: /mcp refuses, naming where to sign in.
    const first = new Client({ name: "oauth-test", version: "1.0.0" });
    await expect(first.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }))).rejects.toThrow(/Unauthorized/);
    expect(provider.information?.client_id).toBeTruthy();
    expect(provider.authorizationUrl?.searchParams.get("resource")).toBe(mcpUrl);

    const page = await browser.context.newPage();
    const arrived = await authorizeInBrowser(mcpUrl, provider, page, callback, { email: account.email, smtp });
    expect(arrived.searchParams.get("state")).toBe(provider.stateValue);
    expect(arrived.searchParams.get("iss")).toBe(service.baseUrl);
    expect(provider.saved?.refresh_token).toBeTruthy();
    expect(provider.saved?.expires_in).toBeLessThanOrEqual(3600);

    const client = await connectWithOAuth(mcpUrl, provider);
    const agents = structured(await client.callTool({ name: "list_agents", arguments: {} }));
    expect(agents.data.map((a: { agent_id: string }) => a.agent_id)).toEqual([agentId]);
    const call = structured(await client.callTool({ name: "place_call", arguments: { agent_id: agentId, to_number: "+15005550006" } }));
    expect(call).toMatchObject({ agent_id: agentId, direction: "outbound" });
    await client.close();
    await page.close();
  });

  it("identifies itself with a client ID metadata document instead of registering", { timeout: 120_000 }, async () => {
    const account = await createAccount(service.core);
    const { agentId } = await agentWithNumber(new Api(service.baseUrl, account.apiKey));
    let documentUrl = "";
    const fetched: string[] = [];
    const host = await startLoopbackHttps((req, res) => {
      fetched.push(req.url ?? "");
      res.writeHead(200, { "content-type": "application/json", "cache-control": "max-age=300" });
      res.end(
        JSON.stringify({
          client_id: documentUrl,
          client_name: "Metadata document client",
          redirect_uris: [callback.url],
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          token_endpoint_auth_method: "none",
        }),
      );
    });
    documentUrl = `${host.url}/oauth/client.json`;
    try {
      const provider = new TestOAuthClient(callback.url, { clientMetadataUrl: documentUrl });
      const page = await browser.context.newPage();
      await authorizeInBrowser(mcpUrl, provider, page, callback, { email: account.email, smtp });
      expect(provider.information?.client_id).toBe(documentUrl);
      expect(fetched).toContain("/oauth/client.json");
      const client = await connectWithOAuth(mcpUrl, provider);
      expect(structured(await client.callTool({ name: "list_agents", arguments: {} })).data).toHaveLength(1);
      const call = structured(await client.callTool({ name: "place_call", arguments: { agent_id: agentId, to_number: "+15005550006" } }));
      expect(call.agent_id).toBe(agentId);
      await client.close();
      await page.close();
    } finally {
      await host.close();
    }
  });
});
