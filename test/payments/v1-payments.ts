import type { PrivateKeyAccount } from "viem/accounts";
import type { PaymentSettings } from "../../payments/settings.js";
import type { V1Authorization, V1Requirements } from "../../payments/x402-v1.js";
import { BASE_SEPOLIA_USDC, randomNonce, TRANSFER_WITH_AUTHORIZATION } from "../support/wallet.js";

/** The settings of a local-mode service paid in Base Sepolia USDC, to a fixed payee. */
export function baseSepoliaSettings(overrides: Partial<PaymentSettings> = {}): PaymentSettings {
  return {
    mode: "local",
    network: BASE_SEPOLIA_USDC.network,
    chainId: BASE_SEPOLIA_USDC.chainId,
    asset: BASE_SEPOLIA_USDC.asset,
    assetName: BASE_SEPOLIA_USDC.name,
    assetVersion: BASE_SEPOLIA_USDC.version,
    decimals: 6,
    payee: "0x1111111111111111111111111111111111111111",
    testMoney: true,
    topupMinMicros: 500_000,
    topupMaxMicros: 500_000_000,
    ...overrides,
  };
}

/**
 * An EIP-3009 authorization for `requirements`, signed by `wallet` in the settings' token domain,
 * valid from a minute before `nowSeconds` for five minutes; `overrides` change what is signed.
 */
export async function signV1(
  wallet: PrivateKeyAccount,
  requirements: V1Requirements,
  settings: PaymentSettings,
  nowSeconds: number,
  overrides: Partial<{ to: `0x${string}`; value: string; validAfter: number; validBefore: number; nonce: `0x${string}` }> = {},
): Promise<{ authorization: V1Authorization; signature: `0x${string}` }> {
  const message = {
    from: wallet.address,
    to: overrides.to ?? (requirements.payTo as `0x${string}`),
    value: BigInt(overrides.value ?? requirements.maxAmountRequired),
    validAfter: BigInt(overrides.validAfter ?? nowSeconds - 60),
    validBefore: BigInt(overrides.validBefore ?? nowSeconds + 300),
    nonce: overrides.nonce ?? randomNonce(),
  };
  const signature = await wallet.signTypedData({
    domain: { name: settings.assetName, version: settings.assetVersion, chainId: settings.chainId, verifyingContract: settings.asset },
    types: { TransferWithAuthorization: TRANSFER_WITH_AUTHORIZATION },
    primaryType: "TransferWithAuthorization",
    message,
  });
  const authorization = { ...message, value: String(message.value), validAfter: String(message.validAfter), validBefore: String(message.validBefore) };
  return { authorization, signature };
}

/** An X-PAYMENT header: the base64 JSON of `payment` (whatever it holds). */
export const xPayment = (payment: unknown) => Buffer.from(JSON.stringify(payment)).toString("base64");

/** The X-PAYMENT of a signed authorization, as a v1 client sends it for `requirements`. */
export const v1Header = (requirements: V1Requirements, signed: { authorization: unknown; signature: unknown }) =>
  xPayment({ x402Version: 1, scheme: "exact", network: requirements.network, payload: signed });
