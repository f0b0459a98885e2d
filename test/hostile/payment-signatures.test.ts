import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { malformedCredential } from "../../payments/credential-check.js";
import { type Bystander, bystander } from "../support/bystander.js";
import { startTestService, type TestService } from "../support/service.js";
import { mppFetch, newWallet, signX402, unusedPayment } from "../support/wallet.js";

// Payments whose signature no key can be recovered from (all zeros, the wrong length, not hex,
// r or s zero or past the curve's order, v not 27 or 28), or whose authorization is malformed:
// the payment libraries took them for their own failure ("an internal payment error"). They are
// the payer's: a 402 with both challenges again, saying what is wrong, and nothing credited.

let service: TestService;
let other: Bystander;
beforeAll(async () => {
  service = await startTestService({ env: { TOPUP_MIN_USD: "0.01" } });
  other = await bystander(service);
});
afterAll(() => service?.stop());

const TOPUP = "/v1/billing/topup/x402/pay?amount=1";
// secp256k1's group order n, as 32 bytes of hex.
const N = "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141";
const r = "11".repeat(32);
const s = "22".repeat(32);

const SIGNATURES: Array<[string, unknown, RegExp]> = [
  ["all zeros", `0x${"00".repeat(65)}`, /not a valid secp256k1 signature/],
  ["r zero", `0x${"00".repeat(32)}${s}1b`, /not a valid secp256k1 signature/],
  ["s zero", `0x${r}${"00".repeat(32)}1b`, /not a valid secp256k1 signature/],
  ["r the curve's order", `0x${N}${s}1b`, /not a valid secp256k1 signature/],
  ["s past the curve's order", `0x${r}${"ff".repeat(32)}1c`, /not a valid secp256k1 signature/],
  ["v of 5", `0x${r}${s}05`, /not a valid secp256k1 signature/],
  ["one byte short", `0x${r}${s}`, /65 bytes of hex/],
  ["one byte long", `0x${r}${s}1b00`, /65 bytes of hex/],
  ["an odd number of digits", `0x${r}${s}1`, /65 bytes of hex/],
  ["not hex", `0x${"zz".repeat(65)}`, /65 bytes of hex/],
  ["no 0x", `${r}${s}1b`, /65 bytes of hex/],
  ["a number", 12345, /65 bytes of hex/],
  ["null", null, /65 bytes of hex/],
];

async function expectRefused(res: Response, reason: RegExp, label: string) {
  const body = (await res.json()) as { code: string; detail: string };
  expect(res.status, label).toBe(402);
  expect(body.code, label).toBe("payment_required");
  expect(body.detail, label).toMatch(reason);
  expect(body.detail, label).not.toMatch(/internal/i);
  expect(res.headers.get("payment-required"), label).toBeTruthy();
  expect(res.headers.get("www-authenticate"), label).toMatch(/^Payment /);
}

describe("an x402 payment (PAYMENT-SIGNATURE) whose signature cannot be one", () => {
  it.each(SIGNATURES)("is a 402 with the challenges again: %s", async (label, signature, reason) => {
    const unpaid = await fetch(service.baseUrl + TOPUP);
    const payment = JSON.parse(Buffer.from(await signX402(newWallet(), unpaid.headers.get("payment-required")!), "base64").toString());
    payment.payload.signature = signature;
    const header = Buffer.from(JSON.stringify(payment)).toString("base64");
    await expectRefused(await fetch(service.baseUrl + TOPUP, { headers: { "payment-signature": header } }), reason, label);
  });

  it("is a 402 too when the authorization is malformed, or the payload missing", async () => {
    const unpaid = await fetch(service.baseUrl + TOPUP);
    const signed = JSON.parse(Buffer.from(await signX402(newWallet(), unpaid.headers.get("payment-required")!), "base64").toString());
    const spoiled: Array<[string, (p: any) => void, RegExp]> = [
      ["a from that is not an address", (p) => (p.payload.authorization.from = "nope"), /EIP-3009 authorization/],
      ["a value that is not a number", (p) => (p.payload.authorization.value = "abc"), /EIP-3009 authorization/],
      ["a validBefore past uint256", (p) => (p.payload.authorization.validBefore = "9".repeat(78)), /EIP-3009 authorization/],
      ["a nonce of one byte", (p) => (p.payload.authorization.nonce = "0x12"), /EIP-3009 authorization/],
      ["no payload", (p) => delete p.payload, /has no payload/],
      ["a payload of null", (p) => (p.payload = null), /has no payload/],
    ];
    for (const [label, spoil, reason] of spoiled) {
      const payment = structuredClone(signed);
      spoil(payment);
      const header = Buffer.from(JSON.stringify(payment)).toString("base64");
      await expectRefused(await fetch(service.baseUrl + TOPUP, { headers: { "payment-signature": header } }), reason, label);
    }
    for (const [label, header] of [
      ["not JSON", Buffer.from("x402").toString("base64")],
      ["a JSON string", Buffer.from('"x"').toString("base64")],
    ]) {
      await expectRefused(await fetch(service.baseUrl + TOPUP, { headers: { "payment-signature": header! } }), /PAYMENT-SIGNATURE/, label!);
    }
  });
});

describe("an MPP payment (Authorization: Payment) whose signature cannot be one", () => {
  it("is a 402 with the challenges again, for each kind of broken signature", async () => {
    const made = await unusedPayment(mppFetch, service.baseUrl + TOPUP);
    const credential = JSON.parse(Buffer.from(made.headers.get("authorization")!.replace(/^Payment\s+/i, ""), "base64url").toString());
    for (const [label, signature, reason] of SIGNATURES) {
      const spoiled = { ...credential, payload: { ...credential.payload, signature } };
      const header = `Payment ${Buffer.from(JSON.stringify(spoiled)).toString("base64url")}`;
      await expectRefused(await fetch(made.url, { method: made.method, headers: { authorization: header } }), reason, `MPP, ${label}`);
    }
  });
});

describe("the credential check, reason by reason, before the payment libraries read a credential", () => {
  const AUTHORIZATION = {
    from: `0x${"11".repeat(20)}`,
    to: `0x${"22".repeat(20)}`,
    value: "1000",
    validAfter: "0",
    validBefore: "99999999999",
    nonce: `0x${"ab".repeat(32)}`,
  };
  let signature: string;
  beforeAll(async () => {
    signature = await privateKeyToAccount(generatePrivateKey()).signMessage({ message: "any message: only the key's recovery is checked" });
  });
  const base64 = (credential: unknown) => Buffer.from(typeof credential === "string" ? credential : JSON.stringify(credential)).toString("base64");
  const x402 = (credential: unknown) => malformedCredential(new Headers({ "payment-signature": base64(credential) }));
  const mpp = (credential: unknown) => malformedCredential(new Headers({ authorization: `Payment ${base64(credential)}` }));
  const NO_AUTHORIZATION = "PAYMENT-SIGNATURE does not hold an EIP-3009 authorization (from, to, value, validAfter, validBefore, nonce)";

  it("leaves a well-formed x402 or MPP credential to the libraries, and a request with neither alone", async () => {
    expect(await x402({ payload: { authorization: AUTHORIZATION, signature } })).toBeUndefined();
    expect(await mpp({ payload: { ...AUTHORIZATION, signature } })).toBeUndefined();
    expect(await malformedCredential(new Headers())).toBeUndefined();
    expect(await malformedCredential(new Headers({ authorization: "Bearer sk_test" }))).toBeUndefined();
  });

  it("names the header it refuses: PAYMENT-SIGNATURE for x402, the Payment credential for MPP", async () => {
    expect(await x402("x402")).toEqual({ header: "payment-signature", reason: "PAYMENT-SIGNATURE is not base64 JSON" });
    expect(await mpp("mpp")).toEqual({ header: "authorization", reason: "The Payment credential is not base64 JSON" });
  });

  it("reads an MPP credential only as Authorization: Payment and one token", async () => {
    const unreadable = base64("mpp");
    expect(await malformedCredential(new Headers({ authorization: `payment   ${unreadable}` }))).toMatchObject({ header: "authorization" });
    expect(await malformedCredential(new Headers({ authorization: `Bearer Payment ${unreadable}` }))).toBeUndefined();
    expect(await malformedCredential(new Headers({ authorization: `Payment ${unreadable} ${unreadable}` }))).toBeUndefined();
  });

  it("refuses JSON nested too deep, or with too many arrays and objects, without parsing it", async () => {
    expect(await x402(`${"[".repeat(65)}${"]".repeat(65)}`)).toEqual({
      header: "payment-signature",
      reason: "PAYMENT-SIGNATURE nests JSON deeper than 64 levels",
    });
    expect(await x402(`${"[".repeat(64)}${"]".repeat(64)}`)).toMatchObject({ reason: "PAYMENT-SIGNATURE has no payload" });
    expect(await mpp(`[${"[],".repeat(10_000)}[]]`)).toEqual({
      header: "authorization",
      reason: "The Payment credential holds more than 10000 arrays and objects",
    });
  });

  it("refuses a credential without a payload object, JSON null included", async () => {
    for (const credential of [null, '"x"', {}, { payload: null }, { payload: "text" }]) {
      expect((await x402(credential))?.reason, JSON.stringify(credential)).toBe("PAYMENT-SIGNATURE has no payload");
    }
  });

  it("refuses an authorization that is missing, or whose numbers are not decimal digits or do not fit 256 bits", async () => {
    expect((await x402({ payload: { signature } }))?.reason).toBe(NO_AUTHORIZATION);
    expect((await x402({ payload: { authorization: null, signature } }))?.reason).toBe(NO_AUTHORIZATION);
    for (const value of ["12a", "a12", "-1", "", "1".repeat(79), (2n ** 256n).toString()]) {
      expect((await x402({ payload: { authorization: { ...AUTHORIZATION, value }, signature } }))?.reason, value).toBe(NO_AUTHORIZATION);
    }
    for (const value of ["7", (2n ** 256n - 1n).toString()]) {
      expect(await x402({ payload: { authorization: { ...AUTHORIZATION, value }, signature } }), value).toBeUndefined();
    }
  });

  it("refuses a signature that does not start with 0x, whatever follows", async () => {
    expect((await x402({ payload: { authorization: AUTHORIZATION, signature: `ab${signature}` } }))?.reason).toBe(
      "the signature must be 65 bytes of hex (0x and 130 hex digits)",
    );
  });
});

describe("while payments are attacked", () => {
  it("serves another tenant, and a well-formed payment still pays", async () => {
    const unpaid = await fetch(service.baseUrl + TOPUP);
    const payment = JSON.parse(Buffer.from(await signX402(newWallet(), unpaid.headers.get("payment-required")!), "base64").toString());
    payment.payload.signature = `0x${"00".repeat(65)}`;
    const zeros = Buffer.from(JSON.stringify(payment)).toString("base64");
    const attacks = Array.from({ length: 20 }, () => fetch(service.baseUrl + TOPUP, { headers: { "payment-signature": zeros } }).then((res) => res.status));
    const [statuses] = await Promise.all([Promise.all(attacks), other.sample(5)]);
    expect(new Set(statuses)).toEqual(new Set([402]));
    const good = await signX402(newWallet(), (await fetch(service.baseUrl + TOPUP)).headers.get("payment-required")!);
    expect((await fetch(service.baseUrl + TOPUP, { headers: { "payment-signature": good } })).status).toBe(200);
    await other.check();
  });
});
