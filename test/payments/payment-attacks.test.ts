import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accounts } from "../../core/db/schema/accounts.js";
import { numbers } from "../../core/db/schema/numbers.js";
import { paymentSettlements } from "../../core/db/schema/payment-settlements.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { expectBalanceIsLedgerSum } from "../billing/support.js";
import { startTestService, type TestService } from "../support/service.js";
import { mppFetch, newWallet, paidRequest, type Sent, signX402, unusedPayment, x402Fetch } from "../support/wallet.js";

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ env: { TOPUP_MIN_USD: "0.01" } });
});
afterAll(() => service?.stop());

const url = (path: string) => service.baseUrl + path;
const json = async (res: Response) => ({ status: res.status, body: (await res.json()) as any, headers: res.headers });

describe("payments that must be refused (402)", () => {
  it.each([
    ["x402", x402Fetch],
    ["MPP", mppFetch],
  ] as const)("refuses a %s payment replayed on another request, and answers a retry of the same request as before", async (_name, client) => {
    const sent: Sent = [];
    const wallet = newWallet();
    const first = await json(await client(wallet, undefined, sent)(url("/v1/billing/topup/x402/pay?amount=2"), { method: "POST" }));
    expect(first.status).toBe(200);
    const paid = paidRequest(sent);
    // The same request with the same payment: the same answer, credited once.
    const retried = await json(await fetch(paid.url, { method: paid.method, headers: paid.headers }));
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual(first.body);
    expect(retried.headers.get("idempotent-replayed")).toBe("true");
    const [account] = await service.core.db.select().from(accounts).where(eq(accounts.walletAddress, wallet.address));
    expect(account!.balanceMicros).toBe(2_000_000);
    // Another request (a different amount) with that payment: refused.
    const replayed = await fetch(url("/v1/billing/topup/x402/pay?amount=3"), { method: "POST", headers: paid.headers });
    expect(replayed.status).toBe(402);
    expect(account!.balanceMicros).toBe(2_000_000);
  });

  it("refuses a payment for 0.01 presented for 5.00", async () => {
    const wallet = newWallet();
    const unpaid = await fetch(url("/v1/billing/topup/x402/pay?amount=5"), { method: "POST" });
    const signature = await signX402(wallet, unpaid.headers.get("payment-required")!, { value: "10000" });
    const res = await json(await fetch(url("/v1/billing/topup/x402/pay?amount=5"), { method: "POST", headers: { "payment-signature": signature } }));
    expect(res.status).toBe(402);
    expect(res.body.code).toBe("payment_required");
    expect(await service.core.db.select().from(accounts).where(eq(accounts.walletAddress, wallet.address))).toEqual([]);
  });

  it.each([
    ["x402", x402Fetch],
    ["MPP", mppFetch],
  ] as const)("refuses a %s payment made for one route presented on another of the same price", async (_name, client) => {
    // GET /v1/x402/agents and GET /v1/x402/numbers cost the same: only the route binding differs.
    const madeForAgents = await unusedPayment(client, url("/v1/x402/agents"));
    const elsewhere = await json(await fetch(url("/v1/x402/numbers"), { headers: madeForAgents.headers }));
    expect(elsewhere.status).toBe(402);
    expect(await service.core.db.select().from(paymentSettlements).where(eq(paymentSettlements.scope, "GET /v1/x402/numbers"))).toEqual([]);
    // Where it was made for, the same payment is good.
    expect((await fetch(madeForAgents.url, { headers: madeForAgents.headers })).status).toBe(404);
  });

  it("serves one of 10 concurrent requests carrying one payment, and settles it once", async () => {
    const wallet = newWallet();
    const unpaid = await fetch(url("/v1/x402/numbers/buy"), { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    const signature = await signX402(wallet, unpaid.headers.get("payment-required")!);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        fetch(url("/v1/x402/numbers/buy"), { method: "POST", headers: { "content-type": "application/json", "payment-signature": signature }, body: "{}" }),
      ),
    );
    const served = answers.filter((r) => r.status === 201 && r.headers.get("idempotent-replayed") === null);
    expect(served).toHaveLength(1);
    expect(answers.every((r) => r.status === 201 || r.status === 402)).toBe(true);
    const [account] = await service.core.db.select().from(accounts).where(eq(accounts.walletAddress, wallet.address));
    expect(await service.core.db.select().from(paymentSettlements).where(eq(paymentSettlements.payer, wallet.address))).toHaveLength(1);
    expect(await service.core.db.select().from(numbers).where(eq(numbers.accountId, account!.accountId))).toHaveLength(1);
    await expectBalanceIsLedgerSum(service.core, account!.accountId);
  });

  it("refuses an expired authorization, and one not valid yet", async () => {
    const wallet = newWallet();
    const unpaid = await fetch(url("/v1/billing/topup/x402/pay?amount=1"));
    const now = BigInt(Math.floor(Date.now() / 1000));
    for (const overrides of [{ validBefore: now - 5n }, { validAfter: now + 600n, validBefore: now + 900n }]) {
      const signature = await signX402(wallet, unpaid.headers.get("payment-required")!, overrides);
      expect((await fetch(url("/v1/billing/topup/x402/pay?amount=1"), { headers: { "payment-signature": signature } })).status).toBe(402);
    }
    const signature = await signX402(wallet, unpaid.headers.get("payment-required")!);
    expect((await fetch(url("/v1/billing/topup/x402/pay?amount=1"), { headers: { "payment-signature": signature } })).status).toBe(200);
  });

  it("refuses a signature by someone other than the payer it names", async () => {
    const wallet = newWallet();
    const impostor = newWallet();
    const unpaid = await fetch(url("/v1/billing/topup/x402/pay?amount=1"));
    const signature = JSON.parse(Buffer.from(await signX402(impostor, unpaid.headers.get("payment-required")!), "base64").toString());
    signature.payload.authorization.from = wallet.address;
    const forged = Buffer.from(JSON.stringify(signature)).toString("base64");
    expect((await fetch(url("/v1/billing/topup/x402/pay?amount=1"), { headers: { "payment-signature": forged } })).status).toBe(402);
  });
});

describe("the 402 challenge", () => {
  it("offers both protocols and says the price and how to pay", async () => {
    const res = await new Api(service.baseUrl).get("/v1/x402/numbers");
    expect(res.status).toBe(402);
    expect(res.headers.get("www-authenticate")).toMatch(/^Payment /);
    expect(res.headers.get("payment-required")).toBeTruthy();
    expect(res.body).toMatchObject({ code: "payment_required", price: "0.001000", currency: "USD", payment_methods: ["x402", "mpp"] });
    expect(res.body.detail).toMatch(/agent_token/);
  });

  it("validates the top-up amount before issuing any challenge", async () => {
    const api = new Api(service.baseUrl);
    for (const amount of ["abc", "-1", "1.1234567", "100000", "0.001"]) {
      const res = await api.post("/v1/billing/topup/x402/pay", undefined, { query: { amount } });
      expect(res.status, amount).toBe(422);
      expect(res.body.errors[0].field).toBe("amount");
      expect(res.headers.get("payment-required")).toBeNull();
    }
    expect((await api.post("/v1/billing/topup/x402/pay")).status).toBe(422);
  });
});

describe("agent tokens", () => {
  async function walletWithToken(amount: string) {
    const wallet = newWallet();
    const topup = await json(await x402Fetch(wallet)(url(`/v1/billing/topup/x402/pay?amount=${amount}`), { method: "POST" }));
    return { wallet, token: topup.body.agent_token as string };
  }

  it("cannot touch another wallet's numbers, calls or events (404)", async () => {
    const alice = await walletWithToken("5");
    const mallory = await walletWithToken("5");
    const a = new Api(service.baseUrl, alice.token);
    const m = new Api(service.baseUrl, mallory.token);
    const number = (await a.post("/v1/x402/numbers/buy", {})).body.number;
    const call = (await a.post("/v1/x402/calls", { to_number: "+14155550142" })).body;
    expect((await m.post("/v1/x402/numbers/renew", { number_id: number.number_id })).status).toBe(404);
    expect((await m.get(`/v1/x402/calls/${call.call_id}/transcript`)).status).toBe(404);
    expect((await m.get("/v1/x402/numbers")).body.data).toEqual([]);
    expect((await m.get("/v1/x402/events")).status).toBe(404);
    expect((await m.post(`/v1/sandbox/calls/${call.call_id}/say`, { text: "hi" })).status).toBe(404);
    expect((await a.get("/v1/x402/numbers")).body.data.map((n: any) => n.number_id)).toEqual([number.number_id]);
    // Nor may a token reach the API-key routes.
    expect((await m.get(`/v1/calls/${call.call_id}`)).status).toBe(401);
  });

  it("gets a 402 with both challenges when the balance does not cover the price, never a negative balance", async () => {
    const poor = await walletWithToken("0.50");
    const api = new Api(service.baseUrl, poor.token);
    const refused = await api.post("/v1/x402/numbers/buy", {});
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: "insufficient_balance", price: "1.150000" });
    expect(refused.headers.get("payment-required")).toBeTruthy();
    expect(refused.headers.get("www-authenticate")).toMatch(/^Payment /);
    const [account] = await service.core.db.select().from(accounts).where(eq(accounts.walletAddress, poor.wallet.address));
    expect(account!.balanceMicros).toBe(500_000);
    expect((await api.get("/v1/x402/numbers")).status).toBe(200);
  });

  it("renews a lease by 30 days per renewal, charging its month", async () => {
    const { token } = await walletWithToken("5");
    const api = new Api(service.baseUrl, token);
    const number = (await api.post("/v1/x402/numbers/buy", {})).body.number;
    const renewed = await api.post("/v1/x402/numbers/renew", { number_id: number.number_id });
    expect(renewed.status).toBe(200);
    expect(Date.parse(renewed.body.expires_at) - Date.parse(number.expires_at)).toBe(30 * 86_400_000);
    const twice = await api.post("/v1/x402/numbers/renew", { number_id: number.number_id });
    expect(Date.parse(twice.body.expires_at) - Date.parse(number.expires_at)).toBe(60 * 86_400_000);
    expect((await api.post("/v1/x402/numbers/renew", { number_id: "num_missing" })).status).toBe(404);
  });

  it("is refused when unknown, and API keys are refused on the no-signup routes", async () => {
    expect((await new Api(service.baseUrl, "at_" + "x".repeat(43)).get("/v1/x402/numbers")).status).toBe(401);
    const keyed = await createAccount(service.core);
    expect((await new Api(service.baseUrl, keyed.apiKey).get("/v1/x402/numbers")).status).toBe(401);
  });
});

describe("top-up with an API key", () => {
  it("credits the key's account and returns no agent_token: minting one with a key is an explicit act", async () => {
    const owner = await createAccount(service.core, undefined, { creditMicros: 0 });
    const wallet = newWallet();
    const pay = x402Fetch(wallet);
    const res = await json(await pay(url("/v1/billing/topup/x402/pay?amount=3"), { method: "POST", headers: { authorization: `Bearer ${owner.apiKey}` } }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ account_id: owner.accountId, credited: "3.000000", balance: "3.000000", agent_token: null });
    expect(await service.core.db.select().from(accounts).where(eq(accounts.walletAddress, wallet.address))).toEqual([]);
    const keyed = new Api(service.baseUrl, owner.apiKey);
    expect((await keyed.get("/v1/auth/agent-tokens")).body.data).toEqual([]);
    const minted = await keyed.post("/v1/auth/agent-tokens", { name: "wallet side" });
    expect(minted.status).toBe(201);
    const viaToken = await new Api(service.baseUrl, minted.body.agent_token).get("/v1/x402/numbers");
    expect(viaToken.status).toBe(200);
  });

  it("works with MPP too, the credential travelling in Payment-Authorization beside the key", async () => {
    const owner = await createAccount(service.core, undefined, { creditMicros: 0 });
    const sent: Sent = [];
    const res = await json(
      await mppFetch(
        newWallet(),
        undefined,
        sent,
      )(url("/v1/billing/topup/x402/pay?amount=2"), { method: "POST", headers: { authorization: `Bearer ${owner.apiKey}` } }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ account_id: owner.accountId, balance: "2.000000" });
    expect(paidRequest(sent).headers.get("payment-authorization")).toMatch(/^Payment /);
  });
});
