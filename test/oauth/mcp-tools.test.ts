import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { AGENT_LIMIT_RULES } from "../../mcp/agent-limit.js";
import { toolScope } from "../../mcp/scopes.js";
import { toolsFor } from "../../mcp/server.js";
import { FormBrowser, startCallbackServer, TestOAuthClient, tokensFor } from "../support/oauth.js";
import { startTestService, type TestService } from "../support/service.js";
import { startSmtpServer } from "../support/smtp.js";

let service: TestService;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
let callback: Awaited<ReturnType<typeof startCallbackServer>>;

beforeAll(async () => {
  smtp = await startSmtpServer();
  [service, callback] = await Promise.all([startTestService({ env: { SMTP_URL: smtp.url } }), startCallbackServer()]);
});
afterAll(async () => {
  await callback?.close();
  await service?.stop();
  await smtp?.close();
});

async function toolsList(token: string): Promise<string> {
  const res = await fetch(`${service.baseUrl}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, accept: "application/json, text/event-stream", "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
  expect(res.status).toBe(200);
  return res.text();
}

// SHA-256 of tools/list's answer to an API key (sandbox carrier) as it was before OAuth came to
// /mcp (main at 6f0ed0a): OAuth changed nothing an API key sees. A deliberate change to a tool
// changes it: then put the new hash here. Last changed on purpose by decision 0088's smaller
// listing and tool words, with the live call view's `_meta.ui` and app-only watch_call (mcp/app/).
const TOOLS_LIST_BEFORE_OAUTH = "12155146c2a53d4a5104f721539368aea2819fb778d1ad4774f6aec9556c70b9";

describe("the MCP tools under OAuth", () => {
  it("answers an API key's tools/list byte for byte as before, and an OAuth client's the same", async () => {
    const account = await createAccount(service.core);
    const withKey = await toolsList(account.apiKey);
    expect(createHash("sha256").update(withKey).digest("hex")).toBe(TOOLS_LIST_BEFORE_OAUTH);
    const tokens = await tokensFor(`${service.baseUrl}/mcp`, new TestOAuthClient(callback.url), new FormBrowser(service.baseUrl), {
      email: account.email,
      smtp,
    });
    expect(await toolsList(tokens.access_token)).toBe(withKey);
  });

  it("gives every tool a scope that follows its hints, and a rule for agent-limited grants", () => {
    for (const tool of toolsFor({ carrier: "sandbox" })) {
      expect(AGENT_LIMIT_RULES[tool.name], tool.name).toBeDefined();
      if (tool.hints.spendsMoney) expect(toolScope(tool), tool.name).toBe("agentline:spend");
      else if (tool.hints.readOnly) expect(toolScope(tool), tool.name).toBe("agentline:read");
      else expect(toolScope(tool), tool.name).toBe("agentline:write");
    }
    // What spends money, per the tools' own hints: buying numbers, placing calls, the sandbox's inbound call and text.
    expect(
      toolsFor({ carrier: "sandbox" })
        .filter((t) => toolScope(t) === "agentline:spend")
        .map((t) => t.name)
        .sort(),
    ).toEqual(["buy_number", "place_call", "send_text", "simulate_inbound_call", "simulate_inbound_text", "transfer_call"]);
  });
});
