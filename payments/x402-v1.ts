import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { authorizationTypes } from "@x402/evm";
import { getAddress, verifyTypedData } from "viem";
import { parseClientJson } from "../core/schemas/json-limits.js";
import { isEip3009Authorization } from "./credential-check.js";
import type { PaymentSettings } from "./settings.js";

/**
 * x402 v1, still spoken by older clients: the challenge is the 402's JSON body (`x402Version: 1`,
 * `accepts`), the payment comes back in `X-PAYMENT` (base64 JSON), the receipt goes out in
 * `X-PAYMENT-RESPONSE`. Accepted for the `exact` scheme on Base, whose v1 network names are these;
 * the payment itself is the same EIP-3009 authorization as v2's, settled the same way.
 */
const V1_NETWORKS: Record<string, string> = { "eip155:8453": "base", "eip155:84532": "base-sepolia" };

/** How long a v1 authorization may be outstanding, as the requirements advertise it. */
const MAX_TIMEOUT_SECONDS = 300;

export interface V1Requirements {
  scheme: "exact";
  network: string;
  maxAmountRequired: string;
  resource: string;
  description: string;
  mimeType: string;
  payTo: string;
  maxTimeoutSeconds: number;
  asset: string;
  extra: { name: string; version: string };
}

/** An EIP-3009 authorization as X-PAYMENT carries it (numbers as decimal strings). */
export interface V1Authorization {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

/** What x402 v1 accepts for a request, or undefined when the network has no v1 name (v1 is for Base only). */
export function v1Requirements(settings: PaymentSettings, amountMicros: number, resource: string, description: string): V1Requirements | undefined {
  const network = V1_NETWORKS[settings.network];
  if (!network) return undefined;
  return {
    scheme: "exact",
    network,
    maxAmountRequired: String(amountMicros),
    resource,
    description,
    mimeType: "application/json",
    payTo: settings.payee,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    asset: settings.asset,
    extra: { name: settings.assetName, version: settings.assetVersion },
  };
}

/** The authorization and signature of an X-PAYMENT header, or the reason it cannot be one. */
function decode(header: string, requirements: V1Requirements): { authorization: V1Authorization; signature: `0x${string}` } | string {
  let payment: { x402Version?: unknown; scheme?: unknown; network?: unknown; payload?: { signature?: unknown; authorization?: Partial<V1Authorization> } };
  try {
    payment = parseClientJson(Buffer.from(header, "base64").toString("utf8")) as typeof payment;
  } catch {
    return "X-PAYMENT is not base64 JSON";
  }
  if (payment?.x402Version !== 1) return "X-PAYMENT must carry x402Version 1 (x402 v2 uses PAYMENT-SIGNATURE)";
  if (payment.scheme !== "exact") return "only the exact scheme is accepted";
  if (payment.network !== requirements.network) return `payments are made on ${requirements.network}, not ${String(payment.network)}`;
  const auth = payment?.payload?.authorization;
  const signature = payment?.payload?.signature;
  const complete = typeof signature === "string" && /^0x[0-9a-fA-F]+$/.test(signature) && isEip3009Authorization(auth);
  if (!complete) return "X-PAYMENT does not hold an EIP-3009 authorization and its signature";
  return { authorization: auth as V1Authorization, signature: signature as `0x${string}` };
}

/**
 * Checks an X-PAYMENT against what this request costs, offline: the payee, the exact amount, the
 * validity window and the EIP-712 signature over the authorization (the facilitator of chain and
 * facilitator modes checks again, on chain). Returns the payment as x402 v2 shapes, which the
 * settlement backends and the single-use claim take, or the reason it is refused.
 */
export async function checkV1Payment(
  header: string,
  requirements: V1Requirements,
  settings: PaymentSettings,
  nowSeconds: number,
): Promise<{ payload: PaymentPayload; requirements: PaymentRequirements } | string> {
  const decoded = decode(header, requirements);
  if (typeof decoded === "string") return decoded;
  const { authorization, signature } = decoded;
  if (getAddress(authorization.to) !== getAddress(requirements.payTo)) return `the authorization must pay ${requirements.payTo}`;
  if (authorization.value !== requirements.maxAmountRequired) return `the authorization must be for exactly ${requirements.maxAmountRequired} (atomic units)`;
  if (BigInt(authorization.validAfter) > BigInt(nowSeconds)) return "the authorization is not valid yet";
  // As x402's own facilitator: a few seconds of margin for the settlement itself.
  if (BigInt(authorization.validBefore) < BigInt(nowSeconds + 6)) return "the authorization has expired";
  const valid = await verifyTypedData({
    address: getAddress(authorization.from),
    domain: { name: settings.assetName, version: settings.assetVersion, chainId: settings.chainId, verifyingContract: settings.asset },
    types: authorizationTypes,
    primaryType: "TransferWithAuthorization",
    message: {
      from: getAddress(authorization.from),
      to: getAddress(authorization.to),
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
      nonce: authorization.nonce as `0x${string}`,
    },
    signature,
  }).catch(() => false);
  if (!valid) return "the signature does not match the authorization";
  const accepted: PaymentRequirements = {
    scheme: "exact",
    network: settings.network,
    asset: settings.asset,
    amount: requirements.maxAmountRequired,
    payTo: settings.payee,
    maxTimeoutSeconds: requirements.maxTimeoutSeconds,
    extra: { name: settings.assetName, version: settings.assetVersion },
  };
  return {
    payload: {
      x402Version: 2,
      resource: { url: requirements.resource, description: requirements.description, mimeType: requirements.mimeType },
      accepted,
      payload: { signature, authorization },
    },
    requirements: accepted,
  };
}

/** The X-PAYMENT-RESPONSE receipt of a settled v1 payment. */
export function v1Receipt(requirements: V1Requirements, transaction: string, payer: string): string {
  return Buffer.from(JSON.stringify({ success: true, transaction, network: requirements.network, payer })).toString("base64");
}
