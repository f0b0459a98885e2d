import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { paymentSettlements } from "../../core/db/schema/payment-settlements.js";
import { createLogger } from "../../core/logger.js";
import { Api } from "../../harness/api.js";
import { paymentSettings } from "../../payments/settings.js";
import { startTestService, type TestService } from "../support/service.js";
import { newWallet } from "../support/wallet.js";
import { baseSepoliaSettings, signV1, v1Header } from "./v1-payments.js";

// PAYMENTS_MODE=facilitator, the remote facilitator played by a scripted stand-in on loopback
// (no chain behind it): what a v1 payment's 402 says when the facilitator refuses or fails, at
// verification or at settlement, and that nothing is kept of a payment it did not settle.
interface Answer {
  status: number;
  body: unknown;
}
let answerVerify: (payer: string) => Answer;
let answerSettle: (payer: string, network: string) => Answer;
const calls = { verify: 0, settle: 0 };

let facilitator: Server;
let service: TestService;
let api: Api;
const logged: Array<{ level: number; msg: string; err?: { message: string } }> = [];
const PAYEE = "0x3333333333333333333333333333333333333333";
const TRANSACTION = `0x${"cd".repeat(32)}`;

beforeAll(async () => {
  facilitator = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const { paymentPayload, paymentRequirements } = JSON.parse(Buffer.concat(chunks).toString() || "{}");
      const payer = paymentPayload?.payload?.authorization?.from;
      let answer: Answer = { status: 404, body: {} };
      if (req.url === "/verify") calls.verify++, (answer = answerVerify(payer));
      if (req.url === "/settle") calls.settle++, (answer = answerSettle(payer, paymentRequirements?.network));
      res.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => facilitator.listen(0, "127.0.0.1", resolve));
  service = await startTestService({
    env: { PAYMENTS_MODE: "facilitator", X402_PAYEE: PAYEE, X402_FACILITATOR_URL: `http://127.0.0.1:${(facilitator.address() as AddressInfo).port}` },
    logger: createLogger("error", { write: (line: string) => void logged.push(JSON.parse(line)) }),
  });
  api = new Api(service.baseUrl);
});
afterAll(async () => {
  await service?.stop();
  await new Promise((resolve) => facilitator?.close(resolve));
});
beforeEach(() => {
  answerVerify = (payer) => ({ status: 200, body: { isValid: true, payer } });
  answerSettle = (payer, network) => ({ status: 200, body: { success: true, transaction: TRANSACTION, network, payer } });
  calls.verify = calls.settle = 0;
});

const TOPUP = "/v1/billing/topup/x402/pay";

/** A top-up of 0.75 paid with x402 v1 by a new wallet: the answer, what was kept of the payment, and the unpaid 402's words. */
async function payV1() {
  const wallet = newWallet();
  const unpaid = await api.get(TOPUP, { query: { amount: "0.75" } });
  const requirements = unpaid.body.accepts[0];
  const header = v1Header(requirements, await signV1(wallet, requirements, baseSepoliaSettings({ payee: PAYEE }), Math.floor(Date.now() / 1000)));
  const res = await api.get(TOPUP, { query: { amount: "0.75" }, headers: { "x-payment": header } });
  const kept = await service.core.db.select().from(paymentSettlements).where(eq(paymentSettlements.payer, wallet.address));
  return { wallet, res, kept, howToPay: unpaid.body.detail as string };
}

describe("a remote facilitator that settles", () => {
  it("credits the payment as real money: no test-money mark, the facilitator's transaction in the receipt", async () => {
    const { wallet, res, kept } = await payV1();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ credited: "0.750000", payer: wallet.address, test_money: false });
    expect(res.headers.get("x-payment-test-money")).toBeNull();
    expect(JSON.parse(Buffer.from(res.headers.get("x-payment-response")!, "base64").toString("utf8"))).toEqual({
      success: true,
      transaction: TRANSACTION,
      network: "base-sepolia",
      payer: wallet.address,
    });
    expect(kept.map((s) => [s.mode, s.status, s.reference])).toEqual([["facilitator", "settled", TRANSACTION]]);
    expect(paymentSettings(service.core).testMoney).toBe(false);
  });
});

describe("a remote facilitator that refuses or fails (x402 v1)", () => {
  it.each<[string, () => Answer, string]>([
    ["cannot be reached for verification", () => ({ status: 500, body: { error: "down" } }), "the payment could not be verified"],
    ["refuses verification, saying why", () => ({ status: 200, body: { isValid: false, invalidReason: "insufficient_funds" } }), "insufficient_funds"],
    ["refuses verification without a reason", () => ({ status: 200, body: { isValid: false } }), "the payment was not accepted"],
  ])("answers 402 when the facilitator %s, with that reason, and never settles", async (_label, answer, reason) => {
    answerVerify = answer;
    const { res, kept, howToPay } = await payV1();
    expect(res.status).toBe(402);
    expect(res.body.detail).toBe(`Payment refused: ${reason}. ${howToPay}`);
    expect(res.body.error).toBe(reason);
    expect([calls.verify, calls.settle]).toEqual([1, 0]);
    expect(kept).toEqual([]);
  });

  it.each<[string, (network: string) => Answer, string]>([
    [
      "refuses the settlement, saying why",
      (network) => ({
        status: 200,
        body: { success: false, errorReason: "transaction_failed", errorMessage: "the transfer reverted", transaction: "", network },
      }),
      "the transfer reverted",
    ],
    [
      "refuses the settlement without a message",
      (network) => ({ status: 200, body: { success: false, errorReason: "unexpected_settle_error", transaction: "", network } }),
      "the payment could not be settled",
    ],
    [
      "fails at settlement",
      () => ({ status: 500, body: { error: "facilitator unavailable" } }),
      "the payment could not be settled; it was not taken, try again",
    ],
  ])("answers 402 when the facilitator %s, with that reason, and keeps no claim on the payment", async (_label, answer, reason) => {
    answerSettle = (_payer, network) => answer(network);
    const { res, kept, howToPay } = await payV1();
    expect(res.status).toBe(402);
    expect(res.body.detail).toBe(`Payment refused: ${reason}. ${howToPay}`);
    expect(res.body.error).toBe(reason);
    expect([calls.verify, calls.settle]).toEqual([1, 1]);
    expect(kept).toEqual([]);
  });

  it("logs a settlement that failed, with its error", async () => {
    answerSettle = () => ({ status: 500, body: { error: "facilitator unavailable" } });
    logged.length = 0;
    expect((await payV1()).res.status).toBe(402);
    const line = logged.find((l) => l.msg === "payment settlement failed");
    expect(line).toMatchObject({ level: 50, err: { message: expect.any(String) } });
  });
});
