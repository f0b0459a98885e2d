import { createHmac } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authenticateAgentToken, issueAgentToken } from "../../core/auth/agent-tokens.js";
import { hashToken, safeEqual } from "../../core/auth/tokens.js";
import { accounts } from "../../core/db/schema/accounts.js";
import { createAccount } from "../support/accounts.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

describe("safeEqual", () => {
  it("is false, not an error, for strings of different lengths", () => {
    expect(safeEqual("abc", "abcd")).toBe(false);
    expect(safeEqual("abcd", "abc")).toBe(false);
  });

  it("compares strings of one length", () => {
    expect(safeEqual("abcd", "abcd")).toBe(true);
    expect(safeEqual("abcd", "abce")).toBe(false);
  });
});

describe("agent tokens", () => {
  it("is at_ and the HMAC of the account under the server's own agent-token key, the same every time", async () => {
    const account = await createAccount(service.core);
    const token = await issueAgentToken(service.core, service.core.db, account.accountId);
    const expected = "at_" + createHmac("sha256", service.core.secrets.derive("agent-token")).update(account.accountId).digest("base64url");
    expect(token).toBe(expected);
    expect(await issueAgentToken(service.core, service.core.db, account.accountId)).toBe(token);
    expect(await authenticateAgentToken(service.core, token)).toBe(account.accountId);
  });

  it("is null for a wrong token", async () => {
    const account = await createAccount(service.core);
    const token = await issueAgentToken(service.core, service.core.db, account.accountId);
    expect(await authenticateAgentToken(service.core, token.slice(0, -1) + (token.endsWith("A") ? "B" : "A"))).toBeNull();
  });

  it("never takes a string without the at_ prefix, even one whose hash is stored", async () => {
    const account = await createAccount(service.core);
    await service.core.db.update(accounts).set({ agentTokenHash: hashToken("sk_not_an_agent_token") }).where(eq(accounts.accountId, account.accountId));
    expect(await authenticateAgentToken(service.core, "sk_not_an_agent_token")).toBeNull();
  });
});
