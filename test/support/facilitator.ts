import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { createWalletClient, defineChain, type Hex, http, publicActions } from "viem";
import { privateKeyToAccount } from "viem/accounts";

/**
 * A stand-in for a remote x402 facilitator (the kind X402_FACILITATOR_URL names): the same HTTP
 * protocol (POST /verify, POST /settle), served on loopback by the x402 reference implementation
 * settling on the local chain. It counts the calls it gets, and can be told to fail settlements
 * the way a remote one does: an answer of `success: false`, or an HTTP 500.
 */
export async function startFacilitator(rpcUrl: string, chainId: number, relayerKey: Hex) {
  const account = privateKeyToAccount(relayerKey);
  const chain = defineChain({
    id: chainId,
    name: "anvil",
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  const client = createWalletClient({ account, chain, transport: http(rpcUrl) }).extend(publicActions);
  const scheme = new ExactEvmScheme(
    toFacilitatorEvmSigner({ ...(client as object), address: account.address } as Parameters<typeof toFacilitatorEvmSigner>[0]),
  );
  const calls = { verify: 0, settle: 0 };
  let settleFailure: "none" | "refused" | "broken" = "none";
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const { paymentPayload, paymentRequirements } = JSON.parse(Buffer.concat(chunks).toString() || "{}");
      try {
        let answer: unknown;
        if (req.url === "/verify") {
          calls.verify++;
          answer = await scheme.verify(paymentPayload, paymentRequirements);
        } else if (req.url === "/settle") {
          calls.settle++;
          if (settleFailure === "broken") throw new Error("facilitator unavailable");
          answer =
            settleFailure === "refused"
              ? { success: false, errorReason: "unexpected_settle_error", transaction: "", network: paymentRequirements.network }
              : await scheme.settle(paymentPayload, paymentRequirements);
        } else {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer));
      } catch (error) {
        res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: String(error) }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    failSettlements(how: "none" | "refused" | "broken") {
      settleFailure = how;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
