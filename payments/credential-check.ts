import { isAddress, recoverPublicKey } from "viem";
import { jsonOverLimits, MAX_JSON_CONTAINERS, MAX_JSON_DEPTH } from "../core/schemas/json-limits.js";

/** An EIP-3009 authorization as payments carry it (numbers as decimal strings). */
export interface Eip3009Authorization {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

// A uint256 written in decimal has at most 78 digits.
const UINT = /^\d{1,78}$/;
const UINT256_END = 2n ** 256n;

/** True when auth has an EIP-3009 authorization's fields, each well formed (its numbers at most 78 digits). */
export function isEip3009Authorization(auth: unknown): auth is Eip3009Authorization {
  if (auth === null || typeof auth !== "object") return false;
  const a = auth as Partial<Record<keyof Eip3009Authorization, unknown>>;
  return (
    isAddress(String(a.from)) &&
    isAddress(String(a.to)) &&
    [a.value, a.validAfter, a.validBefore].every((v) => typeof v === "string" && UINT.test(v)) &&
    typeof a.nonce === "string" &&
    /^0x[0-9a-fA-F]{64}$/.test(a.nonce)
  );
}

// Any 32 bytes: whether a signature's public key can be recovered at all does not depend on them.
const PROBE_HASH = `0x${"01".repeat(32)}` as const;

/**
 * Why an EIP-3009 signature cannot be a valid one, or undefined when it may be: 65 bytes of hex
 * (r, s, v) that secp256k1 can recover a key from (r and s in range, r on the curve, v 27 or 28,
 * or 0 or 1).
 */
export async function unusableSignature(signature: unknown): Promise<string | undefined> {
  if (typeof signature !== "string" || !/^0x[0-9a-fA-F]{130}$/.test(signature)) return "the signature must be 65 bytes of hex (0x and 130 hex digits)";
  try {
    await recoverPublicKey({ hash: PROBE_HASH, signature: signature as `0x${string}` });
    return undefined;
  } catch {
    return "the signature is not a valid secp256k1 signature (its r, s or v is out of range)";
  }
}

/** A payment credential refused before the payment libraries read it: the header it came in, and why. */
export interface Malformed {
  header: "payment-signature" | "authorization";
  reason: string;
}

/**
 * Why the x402 v2 (PAYMENT-SIGNATURE) or MPP (Authorization: Payment) credential a request
 * carries cannot be a payment, checked before the payment libraries read it: they take a
 * credential they cannot read, or a signature no key can be recovered from, for their own failure
 * ("an internal payment error"), when it is the payer's. Undefined when the request carries no
 * such credential, or its EIP-3009 authorization and signature are well formed (the libraries
 * check the rest: the terms, the payee, the signer).
 */
export async function malformedCredential(headers: Headers): Promise<Malformed | undefined> {
  const x402 = headers.get("payment-signature");
  const mpp = /^Payment\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "")?.[1];
  if (x402 === null && mpp === undefined) return undefined;
  const header = x402 !== null ? "payment-signature" : "authorization";
  const reason = await credentialProblem(x402 !== null ? "PAYMENT-SIGNATURE" : "The Payment credential", x402 ?? mpp!, x402 !== null);
  return reason === undefined ? undefined : { header, reason };
}

/** What is wrong with a base64 credential (x402's, or MPP's), or undefined. */
async function credentialProblem(name: string, encoded: string, x402: boolean): Promise<string | undefined> {
  // Node's base64 reads the URL-safe alphabet too (MPP's), with or without padding.
  const text = Buffer.from(encoded, "base64").toString("utf8");
  const over = jsonOverLimits(text);
  if (over === "depth") return `${name} nests JSON deeper than ${MAX_JSON_DEPTH} levels`;
  if (over === "containers") return `${name} holds more than ${MAX_JSON_CONTAINERS} arrays and objects`;
  let credential: { payload?: { signature?: unknown; authorization?: unknown } } | null;
  try {
    credential = JSON.parse(text);
  } catch {
    return `${name} is not base64 JSON`;
  }
  const payload = credential?.payload;
  if (payload === null || typeof payload !== "object") return `${name} has no payload`;
  // x402 nests the authorization in the payload; MPP's payload is the authorization.
  const authorization = x402 ? payload.authorization : payload;
  const numbers = authorization as Partial<Record<string, unknown>>;
  const fits =
    isEip3009Authorization(authorization) && [numbers.value, numbers.validAfter, numbers.validBefore].every((v) => BigInt(v as string) < UINT256_END);
  if (!fits) return `${name} does not hold an EIP-3009 authorization (from, to, value, validAfter, validBefore, nonce)`;
  return unusableSignature(payload.signature);
}
