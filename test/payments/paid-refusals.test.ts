import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintAgentToken } from "../../core/auth/agent-tokens.js";
import { accounts } from "../../core/db/schema/accounts.js";
import { paymentSettlements } from "../../core/db/schema/payment-settlements.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { expectBalanceIsLedgerSum } from "../billing/support.js";
import { startTestService, type TestService } from "../support/service.js";
import { mppFetch, newWallet, signX402, x402Fetch } from "../support/wallet.js";

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const clients = { "x402 (@x402/fetch)": [x402Fetch, "payment-response"], "MPP (mppx/client)": [mppFetch, "payment-receipt"] } as const;

describe.each(Object.entries(clients))("a paid request refused after its payment, with %s", (_name, [client, receiptHeader]) => {
  it("says the payment was credited, with the balance, the agent_token that spends it, and the receipt", async () => {
    const wallet = newWallet();
    const res = await client(wallet)(`${service.baseUrl}/v1/x402/calls/call_00000000000000000000000000/transcript`);
    const body = (await res.json()) as any;
    expect(res.status).toBe(404);
    expect(body.code).toBe("not_found");
    expect(res.headers.get(receiptHeader)).toBeTruthy();
    expect(body.payment).toEqual({
      credited: "0.001000",
      balance: "0.001000",
      currency: "USD",
      payer: wallet.address,
      agent_token: expect.stringMatching(/^at_/),
      test_money: true,
      detail: expect.stringContaining("credited to this wallet's balance"),
    });
    // The note is true: the token spends what the payment left.
    (await new Api(service.baseUrl).contract()).check("GET", "/v1/x402/calls/x/transcript", 404, res.headers.get("content-type"), body);
    const listed = await new Api(service.baseUrl, body.payment.agent_token).get("/v1/x402/numbers");
    expect(listed.status).toBe(200);
    const [account] = await service.core.db.select().from(accounts).where(eq(accounts.walletAddress, wallet.address));
    await expectBalanceIsLedgerSum(service.core, account!.accountId);
  });
});

describe("an agent_token whose balance falls short, with a payment", () => {
  it("credits the payment to the token's account and serves the request, never settling it for nothing", async () => {
    const owner = await createAccount(service.core, undefined, { creditMicros: 0 });
    const { agent_token: token } = await mintAgentToken(service.core.db, owner.accountId, { kind: "api_key", id: owner.keyId });
    const wallet = newWallet();
    const res = await x402Fetch(wallet)(`${service.baseUrl}/v1/x402/numbers`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    const [settlement] = await service.core.db.select().from(paymentSettlements).where(eq(paymentSettlements.payer, wallet.address));
    expect(settlement).toMatchObject({ accountId: owner.accountId, amountMicros: 1_000, status: "settled" });
    expect((await new Api(service.baseUrl, owner.apiKey).get("/v1/billing/balance")).body.balance).toBe("0.001000");
    await expectBalanceIsLedgerSum(service.core, owner.accountId);
  });
});

describe("a payment the payment library refuses", () => {
  it("is named in the 402's detail as one sentence, whatever punctuation the library's reason ends with", async () => {
    const url = `${service.baseUrl}/v1/x402/numbers`;
    const challenge = await fetch(url);
    const forLess = await signX402(newWallet(), challenge.headers.get("payment-required")!, { value: "1" });
    const res = await fetch(url, { headers: { "payment-signature": forLess } });
    const body = (await res.json()) as { detail: string };
    expect(res.status).toBe(402);
    expect(body.detail).toMatch(/^Payment refused: Payment verification failed: EVM authorization amount mismatch\. This request costs/);
  });
});
