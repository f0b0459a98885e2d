import { z } from "zod";
import { required } from "./errors.js";
import { address, httpUrl, usd, usdToMicros } from "./values.js";

/** The payments' settings, each with its documentation (docs/configuration.md is generated from them). */
export const paymentSettings = z
  .object({
    PAYMENTS_MODE: z.enum(["local", "chain", "facilitator"]).default("local").meta({
      description: "`local` (offline checks, test money), `chain` (settle on `X402_RPC_URL`) or `facilitator` (remote `X402_FACILITATOR_URL`).",
    }),
    X402_NETWORK: z
      .string()
      .regex(/^eip155:\d+$/, "expected a CAIP-2 EVM network such as eip155:84532")
      .transform((v) => v as `eip155:${number}`)
      .default("eip155:84532")
      .meta({ description: "The EVM network payments are made on (CAIP-2; Base Sepolia by default)." }),
    X402_ASSET: address.default("0x036CbD53842c5426634e7929541eC2318f3dCF7e").meta({
      description: "The EIP-3009 token (6 decimals, so one atomic unit is one micro-dollar) payments are made in; Base Sepolia's test USDC by default.",
    }),
    X402_ASSET_NAME: z.string().min(1).default("USDC").meta({ description: "The token's name in its EIP-712 domain." }),
    X402_ASSET_VERSION: z.string().min(1).default("2").meta({ description: "The token's version in its EIP-712 domain." }),
    X402_PAYEE: address.optional().meta({
      defaultText: "derived (local mode)",
      description: "The address paid. Required in `chain` and `facilitator` modes.",
    }),
    X402_RPC_URL: httpUrl.optional().meta({ description: "`chain` mode: the chain's RPC." }),
    X402_RELAYER_PRIVATE_KEY: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, "expected a 32-byte hex private key")
      .transform((v) => v as `0x${string}`)
      .optional()
      .meta({ secret: true, description: "`chain` mode: the key that pays settlement gas." }),
    X402_FACILITATOR_URL: httpUrl.optional().meta({ description: "`facilitator` mode: the x402 facilitator." }),
    TOPUP_MIN_USD: usd.default("0.50").meta({ description: "Smallest top-up." }),
    TOPUP_MAX_USD: usd.default("500").meta({ description: "Largest top-up." }),
  })
  .meta({
    title: "Payments",
    description: "No-signup payments (x402, MPP) and top-ups, in USDC-like EIP-3009 tokens. The default network and asset are Base Sepolia's test USDC.",
  });

export type PaymentSettings = z.output<typeof paymentSettings>;

/** The payments' part of Config; each mode other than `local` needs its endpoints and a real payee. */
export function paymentsConfig(e: PaymentSettings) {
  if (e.PAYMENTS_MODE === "chain" && !e.X402_RPC_URL) throw required("X402_RPC_URL", "with PAYMENTS_MODE=chain");
  if (e.PAYMENTS_MODE === "chain" && !e.X402_RELAYER_PRIVATE_KEY) throw required("X402_RELAYER_PRIVATE_KEY", "with PAYMENTS_MODE=chain");
  if (e.PAYMENTS_MODE === "facilitator" && !e.X402_FACILITATOR_URL) throw required("X402_FACILITATOR_URL", "with PAYMENTS_MODE=facilitator");
  if (e.PAYMENTS_MODE !== "local" && !e.X402_PAYEE) throw required("X402_PAYEE", `with PAYMENTS_MODE=${e.PAYMENTS_MODE} (real money needs a real payee)`);
  return {
    paymentsMode: e.PAYMENTS_MODE,
    payments: {
      network: e.X402_NETWORK,
      chainId: Number(e.X402_NETWORK.split(":")[1]),
      asset: e.X402_ASSET,
      assetName: e.X402_ASSET_NAME,
      assetVersion: e.X402_ASSET_VERSION,
      /** Unset: derived from the server secret (local mode only). */
      payee: e.X402_PAYEE,
      rpcUrl: e.X402_RPC_URL,
      relayerPrivateKey: e.X402_RELAYER_PRIVATE_KEY,
      facilitatorUrl: e.X402_FACILITATOR_URL,
      topupMinMicros: usdToMicros(e.TOPUP_MIN_USD),
      topupMaxMicros: usdToMicros(e.TOPUP_MAX_USD),
    },
  };
}
