import { x402Client, x402HTTPClient } from "@x402/core/client";
import { ExactEvmSchemeV1 } from "@x402/evm/v1";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accounts } from "../../core/db/schema/accounts.js";
import { paymentSettlements } from "../../core/db/schema/payment-settlements.js";
import { Api } from "../../harness/api.js";
import { expectBalanceIsLedgerSum } from "../billing/support.js";
import { startTestService, type TestService } from "../support/service.js";
import { newWallet } from "../support/wallet.js";

let service: TestService;
let offBase: TestService;
let api: Api;

beforeAll(async () => {
  [service, offBase] = await Promise.all([startTestService(), startTestService({ env: { X402_NETWORK: "eip155:10" } })]);
  api = new Api(service.baseUrl);
});
afterAll(() => Promise.all([service?.stop(), offBase?.stop()]));

/** What a stock x402 v1 client does with a 402: read `accepts` from the body, sign, and answer in X-PAYMENT. */
async function v1Pay(wallet: ReturnType<typeof newWallet>, challengeBody: unknown): Promise<string> {
  const http = new x402HTTPClient(new x402Client().registerV1("base-sepolia", new ExactEvmSchemeV1(wallet)));
  const required = http.getPaymentRequiredResponse(() => null, challengeBody);
  const payload = await http.createPaymentPayload(required);
  return http.encodePaymentSignatureHeader(payload)["X-PAYMENT"]!;
}

const TOPUP = "/v1/billing/topup/x402/pay";

describe("x402 v1 (X-PAYMENT) on Base", () => {
  it("offers the v1 challenge in the 402's body beside the v2 and MPP ones", async () => {
    const unpaid = await api.get(TOPUP, { query: { amount: "0.75" } });
    expect(unpaid.status).toBe(402);
    expect(unpaid.headers.get("payment-required")).toBeTruthy();
    expect(unpaid.headers.get("www-authenticate")).toMatch(/^Payment /);
    expect(unpaid.body.x402Version).toBe(1);
    expect(unpaid.body.accepts).toEqual([
      {
        scheme: "exact",
        network: "base-sepolia",
        maxAmountRequired: "750000",
        resource: `${service.baseUrl}${TOPUP}?amount=0.75`,
        description: "Top up the balance with x402 or MPP",
        mimeType: "application/json",
        payTo: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
        maxTimeoutSeconds: 300,
        asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
        extra: { name: "USDC", version: "2" },
      },
    ]);
  });

  it("settles a v1 client's payment once: the same payment gets the same answer, and is refused on any other request", async () => {
    const wallet = newWallet();
    const unpaid = await api.get(TOPUP, { query: { amount: "0.75" } });
    const payment = await v1Pay(wallet, unpaid.body);
    const paid = await api.get(TOPUP, { query: { amount: "0.75" }, headers: { "x-payment": payment } });
    expect(paid.status).toBe(200);
    expect(paid.body).toMatchObject({ credited: "0.750000", balance: "0.750000", payer: wallet.address, test_money: true });
    const receipt = JSON.parse(Buffer.from(paid.headers.get("x-payment-response")!, "base64").toString("utf8"));
    expect(receipt).toEqual({ success: true, transaction: expect.stringMatching(/^test-money:/), network: "base-sepolia", payer: wallet.address });

    const retried = await api.get(TOPUP, { query: { amount: "0.75" }, headers: { "x-payment": payment } });
    expect(retried.status).toBe(200);
    expect(retried.headers.get("idempotent-replayed")).toBe("true");
    expect(retried.body.balance).toBe("0.750000");

    const elsewhere = await api.post(TOPUP, undefined, { query: { amount: "0.75" }, headers: { "x-payment": payment } });
    expect(elsewhere.status).toBe(402);
    expect(elsewhere.body.detail).toMatch(/^Payment refused: this payment has already been used/);

    const settlements = await service.core.db.select().from(paymentSettlements).where(eq(paymentSettlements.payer, wallet.address));
    expect(settlements.map((s) => [s.amountMicros, s.status])).toEqual([[750_000, "settled"]]);
    const [account] = await service.core.db.select().from(accounts).where(eq(accounts.walletAddress, wallet.address));
    await expectBalanceIsLedgerSum(service.core, account!.accountId);
  });

  it("refuses a v1 payment for another amount, or with a signature that does not match", async () => {
    const wallet = newWallet();
    const forLess = await v1Pay(wallet, (await api.get(TOPUP, { query: { amount: "0.60" } })).body);
    const wrongAmount = await api.get(TOPUP, { query: { amount: "0.75" }, headers: { "x-payment": forLess } });
    expect(wrongAmount.status).toBe(402);
    expect(wrongAmount.body.detail).toMatch(/^Payment refused: the authorization must be for exactly 750000/);

    const good = JSON.parse(Buffer.from(await v1Pay(wallet, (await api.get(TOPUP, { query: { amount: "0.75" } })).body), "base64").toString("utf8"));
    good.payload.authorization.value = "750001";
    const tampered = await api.get(TOPUP, { query: { amount: "0.75" }, headers: { "x-payment": Buffer.from(JSON.stringify(good)).toString("base64") } });
    expect(tampered.status).toBe(402);
    expect(tampered.body.detail).toMatch(/^Payment refused: the authorization must be for exactly 750000/);
    good.payload.authorization.value = "750000";
    good.payload.authorization.nonce = `0x${"ab".repeat(32)}`;
    const forged = await api.get(TOPUP, { query: { amount: "0.75" }, headers: { "x-payment": Buffer.from(JSON.stringify(good)).toString("base64") } });
    expect(forged.status).toBe(402);
    expect(forged.body.detail).toMatch(/^Payment refused: the signature does not match the authorization/);
    expect(await service.core.db.select().from(paymentSettlements).where(eq(paymentSettlements.payer, wallet.address))).toEqual([]);
  });

  it("is offered on Base only: another network's 402 has no v1 challenge, and an X-PAYMENT is refused saying why", async () => {
    const other = new Api(offBase.baseUrl);
    const unpaid = await other.get(TOPUP, { query: { amount: "0.75" } });
    expect(unpaid.status).toBe(402);
    expect(unpaid.body.x402Version).toBeUndefined();
    const refused = await other.get(TOPUP, { query: { amount: "0.75" }, headers: { "x-payment": "eyJ4NDAyVmVyc2lvbiI6MX0=" } });
    expect(refused.status).toBe(402);
    expect(refused.body.detail).toMatch(/^Payment refused: x402 v1 \(X-PAYMENT\) is accepted on Base only/);
  });
});
