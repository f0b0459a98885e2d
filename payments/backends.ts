import { randomBytes } from "node:crypto";
import { HTTPFacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { createWalletClient, defineChain, http, publicActions } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Core } from "../core/context.js";
import type { PaymentSettings } from "./settings.js";

/** Verifies and settles an EIP-3009 payment: the x402 facilitator interface. */
export interface SettlementBackend {
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse>;
}

const payerOf = (payload: PaymentPayload) => String((payload.payload as { authorization: { from: string } }).authorization.from);

/**
 * `local` mode: no chain at all. The signature, amount, payee and validity window were checked
 * offline before this is reached; settlement is an entry in the service's own settlement table,
 * and the reference says it is test money.
 */
export function localBackend(): SettlementBackend {
  return {
    async verify(payload) {
      return { isValid: true, payer: payerOf(payload) };
    },
    async settle(payload, requirements) {
      return { success: true, transaction: `test-money:${randomBytes(16).toString("hex")}`, network: requirements.network, payer: payerOf(payload) };
    },
  };
}

/**
 * `chain` mode: an x402 facilitator in this process, settling transferWithAuthorization at
 * X402_RPC_URL from the relayer account. Settlements go one at a time, so the relayer's nonces
 * never clash.
 */
export function chainBackend(core: Core, settings: PaymentSettings): SettlementBackend {
  const { rpcUrl, relayerPrivateKey } = core.config.payments;
  const account = privateKeyToAccount(relayerPrivateKey!);
  const chain = defineChain({
    id: settings.chainId,
    name: settings.network,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl!] } },
  });
  const client = createWalletClient({ account, chain, transport: http(rpcUrl) }).extend(publicActions);
  const scheme = new ExactEvmScheme(
    toFacilitatorEvmSigner({ ...(client as object), address: account.address } as Parameters<typeof toFacilitatorEvmSigner>[0]),
  );
  let queue: Promise<unknown> = Promise.resolve();
  return {
    verify: (payload, requirements) => scheme.verify(payload, requirements),
    settle(payload, requirements) {
      const settled = queue.then(() => scheme.settle(payload, requirements));
      queue = settled.catch(() => undefined);
      return settled;
    },
  };
}

/** `facilitator` mode: a remote x402 facilitator at X402_FACILITATOR_URL. */
export function remoteBackend(core: Core): SettlementBackend {
  const client = new HTTPFacilitatorClient({ url: core.config.payments.facilitatorUrl! });
  return {
    verify: (payload, requirements) => client.verify(payload, requirements),
    settle: (payload, requirements) => client.settle(payload, requirements),
  };
}

export function settlementBackend(core: Core, settings: PaymentSettings): SettlementBackend {
  switch (settings.mode) {
    case "local":
      return localBackend();
    case "chain":
      return chainBackend(core, settings);
    case "facilitator":
      return remoteBackend(core);
  }
}
