import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Api } from "../../harness/api.js";
import { launchBrowser } from "../support/browser.js";
import { authorizeInBrowser, connectWithOAuth, startCallbackServer, TestOAuthClient } from "../support/oauth.js";
import { onPostgres } from "../support/service.js";
import { startSmtpServer } from "../support/smtp.js";
import { startTcpProxy } from "../support/tcp-proxy.js";
import { type TwoProcesses, twoProcesses } from "../support/two-processes.js";

// Two service processes on one PostgreSQL behind one public address (a TCP proxy standing for
// the load balancer): PGlite is one process by nature, so this runs on PostgreSQL only.
describe.skipIf(!onPostgres)("OAuth across processes", () => {
  let processes: TwoProcesses;
  let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let callback: Awaited<ReturnType<typeof startCallbackServer>>;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;

  beforeAll(async () => {
    [proxy, smtp, callback, browser] = await Promise.all([startTcpProxy(1), startSmtpServer(), startCallbackServer(), launchBrowser()]);
    processes = await twoProcesses({ BASE_URL: proxy.url, SMTP_URL: smtp.url, LOG_LEVEL: "debug" });
    proxy.retarget(processes.a.port);
  });
  afterAll(async () => {
    await browser?.close();
    await processes?.stop();
    await proxy?.close();
    await callback?.close();
    await smtp?.close();
  });

  it("finishes on one process a sign-in started on the other, and a disconnect on one is refused on the other within a second", {
    timeout: 120_000,
  }, async () => {
    const { account, a, b } = processes;
    const agent = await new Api(a.baseUrl, account.apiKey).post("/v1/agents", { name: "Across" });
    expect(agent.status).toBe(201);
    const mcpUrl = `${proxy.url}/mcp`;
    const provider = new TestOAuthClient(callback.url, { clientName: "Across processes" });

    // Registration and the authorization request reach A; once its sign-in page is up, every new
    // connection goes to B (the page's forms, the consent, the redirect back, the code exchange).
    const page = await browser.context.newPage();
    const served: string[] = [];
    page.on("response", (res) => served.push(new URL(res.url()).pathname));
    page.on("framenavigated", (frame) => {
      if (frame === page.mainFrame() && frame.url().includes("/oauth/interaction/") && !served.includes("switched")) {
        served.push("switched");
        proxy.retarget(b.port);
        proxy.dropAll();
      }
    });
    await authorizeInBrowser(mcpUrl, provider, page, callback, { email: account.email, smtp });
    expect(served).toContain("switched");
    expect(a.output()).toContain("/oauth/authorize");
    expect(b.output()).toContain("/oauth/interaction/");

    const client = await connectWithOAuth(mcpUrl, provider);
    const listed = (await client.callTool({ name: "list_agents", arguments: {} })) as CallToolResult;
    expect((listed.structuredContent as { data: Array<{ agent_id: string }> }).data.map((x) => x.agent_id)).toEqual([agent.body.agent_id]);
    await client.close();

    // B has the token cached; the account disconnects the client on A.
    const call = () =>
      fetch(`${b.baseUrl}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${provider.saved!.access_token}`, accept: "application/json, text/event-stream", "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_agents", arguments: {} } }),
      });
    expect((await call()).status).toBe(200);
    const connections = await new Api(a.baseUrl, account.apiKey).get("/v1/auth/connections");
    const [connection] = connections.body.data;
    const disconnectedAt = Date.now();
    expect((await new Api(a.baseUrl, account.apiKey).delete(`/v1/auth/connections/${connection.connection_id}`)).status).toBe(200);
    let status = 200;
    while (status === 200 && Date.now() - disconnectedAt < 5_000) {
      status = (await call()).status;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe(401);
    expect(Date.now() - disconnectedAt).toBeLessThan(1_000);
  });
});
