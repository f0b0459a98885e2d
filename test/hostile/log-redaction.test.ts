import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { type Bystander, bystander } from "../support/bystander.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
let account: TestAccount;
let others: Bystander;
/** Every line the service logged, as written. */
const written: string[] = [];

beforeAll(async () => {
  const logger = createLogger("debug", new Writable({ write: (chunk, _e, done) => (written.push(...String(chunk).trim().split("\n")), done()) }));
  service = await startTestService({ logger });
  account = await createAccount(service.core);
  others = await bystander(service);
});
afterAll(() => service?.stop());

/** The access-log line of one request, by its id. */
async function accessLine(requestId: string): Promise<Record<string, any>> {
  await expect.poll(() => written.some((l) => l.includes(requestId) && l.includes("request completed"))).toBe(true);
  return JSON.parse(written.find((l) => l.includes(requestId) && l.includes("request completed"))!);
}

describe("credentials sent in a query string", () => {
  it("are refused and never written to the log, whatever the parameter is called", async () => {
    const api = new Api(service.baseUrl);
    const agentToken = (await api.withKey(account.apiKey).post("/v1/auth/agent-tokens")).body.agent_token as string;
    const cases: Array<{ query: Record<string, string>; key?: string; secret: string; status: number }> = [
      // No header: the key in the query does not authenticate (401).
      { query: { api_key: account.apiKey }, secret: account.apiKey, status: 401 },
      { query: { access_token: account.apiKey }, secret: account.apiKey, status: 401 },
      // With the header too: a query parameter the route does not define (422).
      { query: { key: account.apiKey, limit: "5" }, key: account.apiKey, secret: account.apiKey, status: 422 },
      { query: { token: agentToken }, key: account.apiKey, secret: agentToken, status: 422 },
      // Under any name, a value that is a credential.
      { query: { note: `bearer ${agentToken}` }, key: account.apiKey, secret: agentToken, status: 422 },
      { query: { [account.apiKey]: "" }, key: account.apiKey, secret: account.apiKey, status: 422 },
    ];
    for (const { query, key, secret, status } of cases) {
      const res = await api.get("/v1/agents", { query, key: key ?? null, unchecked: true });
      expect(res.status, JSON.stringify(query)).toBe(status);
      const line = await accessLine(res.headers.get("x-request-id")!);
      expect(line.req.url).toContain("[redacted]");
      expect(line.req.url.startsWith("/v1/agents?")).toBe(true);
      expect(
        written.filter((l) => l.includes(secret)),
        JSON.stringify(query),
      ).toEqual([]);
    }
    // Other parameters are logged as sent.
    const plain = await api.get("/v1/agents", { query: { limit: "3", offset: "1" }, key: account.apiKey });
    expect((await accessLine(plain.headers.get("x-request-id")!)).req.url).toBe("/v1/agents?limit=3&offset=1");
    await others.check();
  });
});
