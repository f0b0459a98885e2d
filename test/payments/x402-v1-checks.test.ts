import { beforeAll, describe, expect, it } from "vitest";
import { checkV1Payment, type V1Authorization, type V1Requirements, v1Receipt, v1Requirements } from "../../payments/x402-v1.js";
import { newWallet } from "../support/wallet.js";
import { baseSepoliaSettings, signV1, v1Header, xPayment } from "./v1-payments.js";

// x402 v1's offline checks, called directly with real EIP-712 signatures: every refusal with its
// exact words, the bounds of each number and of the validity window, and the v2 shapes a payment
// that passes is handed on as.

const NOW = 1_800_000_000;
const SETTINGS = baseSepoliaSettings();
const RESOURCE = "https://agentline.example/v1/billing/topup/x402/pay?amount=0.75";
let requirements: V1Requirements;

const check = async (header: string, now = NOW) => checkV1Payment(header, requirements, SETTINGS, now);

const wallet = newWallet();
let signed: { authorization: V1Authorization; signature: `0x${string}` };

beforeAll(async () => {
  requirements = v1Requirements(SETTINGS, 750_000, RESOURCE, "Top up the balance")!;
  signed = await signV1(wallet, requirements, SETTINGS, NOW);
});

const INCOMPLETE = "X-PAYMENT does not hold an EIP-3009 authorization and its signature";
const NONCE = `0x${"ab".repeat(32)}`;

describe("what x402 v1 asks for", () => {
  it("names Base and Base Sepolia as v1 does, and asks nothing on a network v1 has no name for", async () => {
    expect(v1Requirements(baseSepoliaSettings({ network: "eip155:8453", chainId: 8453 }), 1, RESOURCE, "d")!.network).toBe("base");
    expect(v1Requirements(baseSepoliaSettings(), 1, RESOURCE, "d")!.network).toBe("base-sepolia");
    expect(v1Requirements(baseSepoliaSettings({ network: "eip155:10", chainId: 10 }), 1, RESOURCE, "d")).toBeUndefined();
  });

  it("asks for exactly the price, to the payee, in the settings' token", () => {
    expect(requirements).toEqual({
      scheme: "exact",
      network: "base-sepolia",
      maxAmountRequired: "750000",
      resource: RESOURCE,
      description: "Top up the balance",
      mimeType: "application/json",
      payTo: SETTINGS.payee,
      maxTimeoutSeconds: 300,
      asset: SETTINGS.asset,
      extra: { name: "USDC", version: "2" },
    });
  });
});

describe("an X-PAYMENT that is not an x402 v1 exact payment on this network", () => {
  it("is refused when it is not base64 JSON", async () => {
    expect(await check(Buffer.from("{not json").toString("base64"))).toBe("X-PAYMENT is not base64 JSON");
  });

  it.each([
    ["null", null],
    ["no version", {}],
    ["version 2", { x402Version: 2, scheme: "exact", network: "base-sepolia" }],
    ["version '1'", { x402Version: "1" }],
  ])("is refused as not x402 v1 (%s)", async (_label, payment) => {
    expect(await check(xPayment(payment))).toBe("X-PAYMENT must carry x402Version 1 (x402 v2 uses PAYMENT-SIGNATURE)");
  });

  it("is refused for another scheme", async () => {
    expect(await check(xPayment({ x402Version: 1, scheme: "upto", network: "base-sepolia", payload: signed }))).toBe("only the exact scheme is accepted");
  });

  it("is refused for another network, naming both", async () => {
    expect(await check(xPayment({ x402Version: 1, scheme: "exact", network: "base", payload: signed }))).toBe("payments are made on base-sepolia, not base");
    expect(await check(xPayment({ x402Version: 1, scheme: "exact" }))).toBe("payments are made on base-sepolia, not undefined");
  });

  it("is refused when it carries no payload at all", async () => {
    expect(await check(xPayment({ x402Version: 1, scheme: "exact", network: "base-sepolia" }))).toBe(INCOMPLETE);
  });
});

describe("an X-PAYMENT whose authorization or signature is malformed", () => {
  const hex = (n: number) => "0x" + "1f".repeat(n / 2);
  const cases: Array<[string, (p: { authorization: Record<string, unknown>; signature: unknown }) => void]> = [
    ["no signature", (p) => delete p.signature],
    ["a signature that is not a string", (p) => (p.signature = 12345)],
    ["a signature in a list", (p) => (p.signature = [p.signature])],
    ["a signature that is not hex", (p) => (p.signature = "0xnothex")],
    ["a signature with a non-hex tail", (p) => (p.signature = `${p.signature}zz`)],
    ["a signature with something before its 0x", (p) => (p.signature = `zz${p.signature}`)],
    ["a signature of no digits", (p) => (p.signature = "0x")],
    ["no authorization", (p) => delete (p as { authorization?: unknown }).authorization],
    ["a from that is not an address", (p) => (p.authorization.from = "0x1234")],
    ["a to that is not an address", (p) => (p.authorization.to = "payee")],
    ["a value given as a number", (p) => (p.authorization.value = 750000)],
    ["a validAfter given as a number", (p) => (p.authorization.validAfter = NOW - 60)],
    ["a validBefore given as a number", (p) => (p.authorization.validBefore = NOW + 300)],
    ["an empty value", (p) => (p.authorization.value = "")],
    ["a value with a non-digit tail", (p) => (p.authorization.value = "750000x")],
    ["a validAfter with something before its digits", (p) => (p.authorization.validAfter = `x${NOW - 60}`)],
    ["a validBefore that is not a number", (p) => (p.authorization.validBefore = "soon")],
    ["a negative validAfter", (p) => (p.authorization.validAfter = "-1")],
    ["a value of 79 digits", (p) => (p.authorization.value = "7".repeat(79))],
    ["no nonce", (p) => delete p.authorization.nonce],
    ["a nonce that is not a string", (p) => (p.authorization.nonce = 7)],
    ["a nonce in a list", (p) => (p.authorization.nonce = [p.authorization.nonce])],
    ["a nonce of 31 bytes", (p) => (p.authorization.nonce = hex(62))],
    ["a nonce of 33 bytes", (p) => (p.authorization.nonce = hex(66))],
    ["a nonce with a non-hex tail", (p) => (p.authorization.nonce = `${p.authorization.nonce}zz`)],
    ["a nonce with something before its 0x", (p) => (p.authorization.nonce = `zz${p.authorization.nonce}`)],
    ["a nonce with a non-hex digit", (p) => (p.authorization.nonce = `0x${"g".repeat(64)}`)],
  ];

  it.each(cases)("is refused as incomplete: %s", async (_label, spoil) => {
    const payload = structuredClone(signed) as unknown as { authorization: Record<string, unknown>; signature: unknown };
    spoil(payload);
    expect(await check(v1Header(requirements, payload))).toBe(INCOMPLETE);
  });

  it("with the largest number a uint256 field may be written with (78 digits), reaches the amount check", async () => {
    const payload = { ...signed, authorization: { ...signed.authorization, value: "9".repeat(78) } };
    expect(await check(v1Header(requirements, payload))).toBe("the authorization must be for exactly 750000 (atomic units)");
  });
});

describe("a well-formed v1 authorization, checked against the request", () => {
  it("is refused when it pays someone other than the payee", async () => {
    const elsewhere = await signV1(wallet, requirements, SETTINGS, NOW, { to: "0x2222222222222222222222222222222222222222" });
    expect(await check(v1Header(requirements, elsewhere))).toBe(`the authorization must pay ${SETTINGS.payee}`);
  });

  it("is refused when it is for another amount, more or less", async () => {
    for (const value of ["749999", "750001"]) {
      const other = await signV1(wallet, requirements, SETTINGS, NOW, { value });
      expect(await check(v1Header(requirements, other))).toBe("the authorization must be for exactly 750000 (atomic units)");
    }
  });

  it("is good from its validAfter second on, and not one second before", async () => {
    const fromNow = await signV1(wallet, requirements, SETTINGS, NOW, { validAfter: NOW });
    expect(typeof (await check(v1Header(requirements, fromNow)))).toBe("object");
    const fromNextSecond = await signV1(wallet, requirements, SETTINGS, NOW, { validAfter: NOW + 1 });
    expect(await check(v1Header(requirements, fromNextSecond))).toBe("the authorization is not valid yet");
  });

  it("needs six seconds of validity left for the settlement: validBefore now+6 is good, now+5 has expired", async () => {
    const sixLeft = await signV1(wallet, requirements, SETTINGS, NOW, { validBefore: NOW + 6 });
    expect(typeof (await check(v1Header(requirements, sixLeft)))).toBe("object");
    const fiveLeft = await signV1(wallet, requirements, SETTINGS, NOW, { validBefore: NOW + 5 });
    expect(await check(v1Header(requirements, fiveLeft))).toBe("the authorization has expired");
    const long = await signV1(wallet, requirements, SETTINGS, NOW, { validBefore: NOW - 100 });
    expect(await check(v1Header(requirements, long))).toBe("the authorization has expired");
  });

  it("is refused when the signature is not the payer's over these very terms", async () => {
    const byAnother = await signV1(newWallet(), requirements, SETTINGS, NOW);
    const forged = { ...byAnother, authorization: { ...byAnother.authorization, from: wallet.address } };
    expect(await check(v1Header(requirements, forged))).toBe("the signature does not match the authorization");
    const otherNonce = { ...signed, authorization: { ...signed.authorization, nonce: NONCE } };
    expect(await check(v1Header(requirements, otherNonce))).toBe("the signature does not match the authorization");
  });

  it("is refused, not trusted, when its signature cannot even be read as one", async () => {
    expect(await check(v1Header(requirements, { ...signed, signature: "0x1234" }))).toBe("the signature does not match the authorization");
  });

  it("is handed on as x402 v2 shapes: the accepted requirements in the service's terms, the resource, the signature", async () => {
    const checked = await check(v1Header(requirements, signed));
    const accepted = {
      scheme: "exact",
      network: "eip155:84532",
      asset: SETTINGS.asset,
      amount: "750000",
      payTo: SETTINGS.payee,
      maxTimeoutSeconds: 300,
      extra: { name: "USDC", version: "2" },
    };
    expect(checked).toEqual({
      payload: {
        x402Version: 2,
        resource: { url: RESOURCE, description: "Top up the balance", mimeType: "application/json" },
        accepted,
        payload: { signature: signed.signature, authorization: signed.authorization },
      },
      requirements: accepted,
    });
  });
});

describe("the v1 receipt (X-PAYMENT-RESPONSE)", () => {
  it("is base64 JSON naming the transaction, the v1 network and the payer", async () => {
    const receipt = v1Receipt(requirements, "test-money:abc", wallet.address);
    expect(JSON.parse(Buffer.from(receipt, "base64").toString("utf8"))).toEqual({
      success: true,
      transaction: "test-money:abc",
      network: "base-sepolia",
      payer: wallet.address,
    });
  });
});
