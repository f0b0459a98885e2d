import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { eq } from "drizzle-orm";
import { Challenge } from "mppx";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { paymentSettlements } from "../../core/db/schema/payment-settlements.js";
import { localBackend } from "../../payments/backends.js";
import { type Collection, PaymentEngine } from "../../payments/engine.js";
import { checkV1Payment, type V1Requirements } from "../../payments/x402-v1.js";
import { startTestService, type TestService } from "../support/service.js";
import { newWallet, randomNonce, signX402 } from "../support/wallet.js";
import { signV1, v1Header } from "./v1-payments.js";

// The payment engine called directly, in local mode: what collect() answers for x402 v1, x402 v2
// and MPP, the reasons it gives, and the single-use claim behind every settlement.
let service: TestService;
let engine: PaymentEngine;
beforeAll(async () => {
  service = await startTestService();
  engine = new PaymentEngine(service.core);
});
afterAll(() => service?.stop());

const PATH = "/v1/engine-test";
const SCOPE = `GET ${PATH}`;
const PRICE = 750_000;
const url = () => service.baseUrl + PATH;
const paid = (requestHash: string, besideAuth = false) => ({ scope: SCOPE, requestHash, description: "An engine test", besideAuth });
const collect = (headers: Record<string, string>, requestHash: string, besideAuth = false) =>
  engine.collect(new Request(url(), { headers }), PRICE, paid(requestHash, besideAuth));
const nowSeconds = () => Math.floor(Date.now() / 1000);

const v1Requirements = (): V1Requirements => engine.v1Accepts(PRICE, url(), "An engine test")[0]!;
/** A v2 PAYMENT-SIGNATURE made from this route's own challenge. */
async function v2Payment(wallet = newWallet(), overrides: Parameters<typeof signX402>[2] = {}) {
  const challenge = await collect({}, "unpaid");
  if (challenge.kind !== "challenge") throw new Error(challenge.kind);
  return signX402(wallet, challenge.headers.get("payment-required")!, overrides);
}
const challenged = (c: Collection) => {
  if (c.kind !== "challenge") throw new Error(`expected a challenge, got ${c.kind}`);
  return c;
};

describe("collecting an x402 v1 payment (X-PAYMENT)", () => {
  it("settles it and says who paid how much under which settlement, with the v1 receipt", async () => {
    const wallet = newWallet();
    const requirements = v1Requirements();
    const collected = await collect({ "x-payment": v1Header(requirements, await signV1(wallet, requirements, engine.settings, nowSeconds())) }, "v1-paid");
    expect(collected).toEqual({
      kind: "paid",
      settlementId: expect.stringMatching(/^pay_/),
      payer: wallet.address,
      amountMicros: PRICE,
      receiptHeaders: expect.any(Headers),
    });
    const receipt = (collected as { receiptHeaders: Headers }).receiptHeaders.get("x-payment-response")!;
    expect(JSON.parse(Buffer.from(receipt, "base64").toString("utf8"))).toEqual({
      success: true,
      transaction: expect.stringMatching(/^test-money:/),
      network: "base-sepolia",
      payer: wallet.address,
    });
  });

  it("claims the nonce in lower case: the same authorization with its nonce in capitals is the same payment", async () => {
    const wallet = newWallet();
    const requirements = v1Requirements();
    const nonce = randomNonce();
    const signed = await signV1(wallet, requirements, engine.settings, nowSeconds(), { nonce });
    const shouted = { ...signed, authorization: { ...signed.authorization, nonce: `0x${nonce.slice(2).toUpperCase()}` } };
    expect((await collect({ "x-payment": v1Header(requirements, shouted) }, "v1-shouted")).kind).toBe("paid");
    const rows = await service.core.db.select().from(paymentSettlements).where(eq(paymentSettlements.payer, wallet.address));
    expect(rows.map((r) => r.nonce)).toEqual([nonce]);
    const again = challenged(await collect({ "x-payment": v1Header(requirements, signed) }, "v1-quiet"));
    expect(again.reason).toBe("this payment has already been used");
  });

  it("refuses a payment the offline check refuses, with the challenges and the check's reason", async () => {
    const requirements = v1Requirements();
    const forLess = await signV1(newWallet(), requirements, engine.settings, nowSeconds(), { value: "1" });
    const refused = challenged(await collect({ "x-payment": v1Header(requirements, forLess) }, "v1-for-less"));
    expect(refused.reason).toBe("the authorization must be for exactly 750000 (atomic units)");
    expect(refused.headers.get("payment-required")).toBeTruthy();
    expect(refused.headers.get("www-authenticate")).toMatch(/^Payment /);
  });

  it("takes a good x402 v2 payment that comes beside a bad X-PAYMENT, and answers exactly as for the v2 payment alone", async () => {
    const wallet = newWallet();
    const collected = await collect({ "x-payment": "not a payment", "payment-signature": await v2Payment(wallet) }, "v2-beside-bad-v1");
    expect(collected).toStrictEqual({
      kind: "paid",
      settlementId: expect.stringMatching(/^pay_/),
      payer: wallet.address,
      amountMicros: PRICE,
      receiptHeaders: expect.any(Headers),
    });
  });
});

describe("collecting x402 v2 and MPP", () => {
  it("settles a v2 payment and says who paid how much under which settlement", async () => {
    const wallet = newWallet();
    const collected = await collect({ "payment-signature": await v2Payment(wallet) }, "v2-paid");
    expect(collected).toEqual({
      kind: "paid",
      settlementId: expect.stringMatching(/^pay_/),
      payer: wallet.address,
      amountMicros: PRICE,
      receiptHeaders: expect.any(Headers),
    });
    expect((collected as { receiptHeaders: Headers }).receiptHeaders.get("payment-response")).toBeTruthy();
  });

  it("gives no reason for a request that carried no payment", async () => {
    const unpaid = challenged(await collect({}, "unpaid"));
    expect(unpaid.reason).toBeUndefined();
  });

  it("gives the payment library's reason for a payment it refuses", async () => {
    const forLess = await v2Payment(newWallet(), { value: "10000" });
    expect(challenged(await collect({ "payment-signature": forLess }, "v2-for-less")).reason).toBe(
      "Payment verification failed: EVM authorization amount mismatch.",
    );
  });

  it("gives the claim's reason for a payment already used on another request", async () => {
    const payment = await v2Payment();
    expect((await collect({ "payment-signature": payment }, "v2-first")).kind).toBe("paid");
    expect(challenged(await collect({ "payment-signature": payment }, "v2-second")).reason).toBe("this payment has already been used");
  });

  it("binds its MPP challenges with the key derived from the server secret for them", async () => {
    const challenge = Challenge.deserialize(challenged(await collect({}, "unpaid")).headers.get("www-authenticate")!);
    expect(Challenge.verify(challenge, { secretKey: service.core.secrets.derive("mpp-challenges").toString("hex") })).toBe(true);
    expect(Challenge.verify(challenge, { secretKey: service.core.secrets.derive("another-purpose").toString("hex") })).toBe(false);
  });

  it("asks for the MPP credential in Payment-Authorization only when the request has another credential in Authorization", async () => {
    const alone = challenged(await collect({}, "unpaid")).headers.get("www-authenticate")!;
    expect(Challenge.deserialize(alone).header).toBeUndefined();
    const beside = challenged(await collect({ authorization: "Bearer at_x" }, "unpaid-beside", true)).headers.get("www-authenticate")!;
    expect(Challenge.deserialize(beside).header).toBe("Payment-Authorization");
  });
});

describe("the single-use claim around the settlement backend", () => {
  it("refuses to settle a payment outside a request it is collected for", async () => {
    const requirements = v1Requirements();
    const checked = await checkV1Payment(
      v1Header(requirements, await signV1(newWallet(), requirements, engine.settings, nowSeconds())),
      requirements,
      engine.settings,
      nowSeconds(),
    );
    if (typeof checked === "string") throw new Error(checked);
    // biome-ignore lint/complexity/useLiteralKeys: the engine's backend is private; the test reaches it on purpose.
    await expect(engine["backend"].settle(checked.payload, checked.requirements)).rejects.toThrow("payment settled outside a request");
  });
});

describe("the local (test money) backend", () => {
  it("verifies and settles with the authorization's payer, under a test-money reference", async () => {
    const wallet = newWallet();
    const requirements = v1Requirements();
    const checked = (await checkV1Payment(
      v1Header(requirements, await signV1(wallet, requirements, engine.settings, nowSeconds())),
      requirements,
      engine.settings,
      nowSeconds(),
    )) as {
      payload: PaymentPayload;
      requirements: PaymentRequirements;
    };
    const backend = localBackend();
    expect(await backend.verify(checked.payload, checked.requirements)).toEqual({ isValid: true, payer: wallet.address });
    expect(await backend.settle(checked.payload, checked.requirements)).toEqual({
      success: true,
      transaction: expect.stringMatching(/^test-money:[0-9a-f]{32}$/),
      network: "eip155:84532",
      payer: wallet.address,
    });
  });
});
