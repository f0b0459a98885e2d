import { getAddress } from "viem";
import type { Core } from "../core/context.js";

/** What a payment must be: network, asset, payee; and how it is settled. */
export interface PaymentSettings {
  mode: "local" | "chain" | "facilitator";
  /** CAIP-2, e.g. eip155:84532. */
  network: `eip155:${number}`;
  chainId: number;
  asset: `0x${string}`;
  /** EIP-712 domain of the token's transferWithAuthorization. */
  assetName: string;
  assetVersion: string;
  /** Six, always: one atomic unit is one micro-dollar of the ledger. */
  decimals: 6;
  payee: `0x${string}`;
  /** Local mode moves no real money; receipts say so. */
  testMoney: boolean;
  topupMinMicros: number;
  topupMaxMicros: number;
}

/**
 * The payment settings of this deployment. In local mode with no X402_PAYEE, the payee is an
 * address derived from the server secret: stable across restarts, and nobody's real wallet.
 */
export function paymentSettings(core: Core): PaymentSettings {
  const p = core.config.payments;
  const payee = p.payee ?? (`0x${core.secrets.derive("local-payee").subarray(0, 20).toString("hex")}` as const);
  return {
    mode: core.config.paymentsMode,
    network: p.network,
    chainId: p.chainId,
    asset: getAddress(p.asset),
    assetName: p.assetName,
    assetVersion: p.assetVersion,
    decimals: 6,
    payee: getAddress(payee),
    testMoney: core.config.paymentsMode === "local",
    topupMinMicros: p.topupMinMicros,
    topupMaxMicros: p.topupMaxMicros,
  };
}
