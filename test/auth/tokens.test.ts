import { createHmac } from "node:crypto";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authenticateAgentToken, mintAgentToken } from "../../core/auth/agent-tokens.js";
import { hashToken, safeEqual } from "../../core/auth/tokens.js";
import { agentTokens } from "../../core/db/schema/agent-tokens.js";
import { newId } from "../../core/ids.js";
import { createAccount } from "../../harness/accounts.js";
import { startTestService, type TestService } from "../support/service.js";

// Tokens (core/auth/tokens.ts, agent-tokens.ts): compared without an error for unequal lengths;
// agent tokens random, stored only as their hash, and taken only with their own prefix. How a
// wallet's agent token is refused under attack is in test/hostile/agent-tokens.test.ts.
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
  it("is at_ and 43 random base62 characters, a new one every time, stored only as its hash", async () => {
    const account = await createAccount(service.core);
    const minter = { kind: "api_key" as const, id: account.keyId };
    const first = await mintAgentToken(service.core.db, account.accountId, minter);
    const second = await mintAgentToken(service.core.db, account.accountId, minter);
    expect(first.agent_token).toMatch(/^at_[0-9A-Za-z]{43}$/);
    expect(second.agent_token).not.toBe(first.agent_token);
    // Not derived from the account under the server's key, as it once was.
    const derived = "at_" + createHmac("sha256", service.core.secrets.derive("agent-token")).update(account.accountId).digest("base64url");
    expect([first.agent_token, second.agent_token]).not.toContain(derived);
    const [row] = await service.core.db.select().from(agentTokens).where(eq(agentTokens.tokenId, first.token_id));
    expect(row!.tokenHash).toBe(hashToken(first.agent_token));
    expect(JSON.stringify(row)).not.toContain(first.agent_token);
    expect(await authenticateAgentToken(service.core, first.agent_token)).toEqual({ accountId: account.accountId, tokenId: first.token_id });
    expect(await authenticateAgentToken(service.core, second.agent_token)).toEqual({ accountId: account.accountId, tokenId: second.token_id });
  });

  it("is null for a wrong token", async () => {
    const account = await createAccount(service.core);
    const { agent_token: token } = await mintAgentToken(service.core.db, account.accountId, { kind: "api_key", id: account.keyId });
    expect(await authenticateAgentToken(service.core, token.slice(0, -1) + (token.endsWith("A") ? "B" : "A"))).toBeNull();
  });

  it("never takes a string without the at_ prefix, even one whose hash is stored", async () => {
    const account = await createAccount(service.core);
    await service.core.db.insert(agentTokens).values({
      tokenId: newId("atk"),
      accountId: account.accountId,
      tokenHash: hashToken("sk_not_an_agent_token"),
      prefix: "sk_not_",
      mintedByKind: "api_key",
      mintedById: account.keyId,
    });
    expect(await authenticateAgentToken(service.core, "sk_not_an_agent_token")).toBeNull();
  });
});
