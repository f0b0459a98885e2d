import { randomBytes } from "node:crypto";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { Mppx } from "mppx/client";
import { charge } from "mppx/evm/client";
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from "viem/accounts";

/** The network and asset a test service is paid in (its PaymentSettings). */
export interface PaidIn {
  network: `eip155:${number}`;
  chainId: number;
  asset: `0x${string}`;
  name: string;
  version: string;
}

export const BASE_SEPOLIA_USDC: PaidIn = {
  network: "eip155:84532",
  chainId: 84532,
  asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
  name: "USDC",
  version: "2",
};

export function newWallet(privateKey: `0x${string}` = generatePrivateKey()): PrivateKeyAccount {
  return privateKeyToAccount(privateKey);
}

/** Every request a payment client sent, with its headers: tests replay payments from these. */
export type Sent = Array<{ url: string; method: string; headers: Headers; body?: string }> & { holdPaid?: boolean };

const carriesPayment = (headers: Headers) =>
  headers.has("payment-signature") || headers.has("payment-authorization") || headers.get("authorization")?.startsWith("Payment ") === true;

/** A fetch that records what it sends; with `sent.holdPaid`, a paying request is kept back (its payment stays unused). */
function recording(sent: Sent): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    sent.push({ url: request.url, method: request.method, headers: new Headers(request.headers), body: init?.body ? String(init.body) : undefined });
    if (sent.holdPaid && carriesPayment(request.headers)) return new Response(null, { status: 599 });
    return fetch(request);
  };
}

/** The request a payment client sent with a payment on it. */
export function paidRequest(sent: Sent) {
  const found = sent.find((r) => carriesPayment(r.headers));
  if (!found) throw new Error("the client sent no payment");
  return found;
}

/** A client's payment for a request, made but never sent. */
export async function unusedPayment(client: typeof x402Fetch, url: string, init?: RequestInit) {
  const sent: Sent = Object.assign([], { holdPaid: true });
  await client(newWallet(), undefined, sent)(url, init).catch(() => undefined);
  return paidRequest(sent);
}

/** The real x402 v2 client (@x402/fetch), allowed to pay up to $50 a request. */
export function x402Fetch(wallet: PrivateKeyAccount, paidIn: PaidIn = BASE_SEPOLIA_USDC, sent: Sent = []) {
  const client = new x402Client().register(paidIn.network, new ExactEvmScheme(wallet));
  client.setSpendControls({ maxAmountPerPayment: "$50", allowedAssets: [{ network: paidIn.network, asset: paidIn.asset, maxAmountPerPayment: "50000000" }] });
  return wrapFetchWithPayment(recording(sent), client);
}

/** The real MPP client (mppx/client) with its EVM charge method, allowed to pay up to $50 a request. */
export function mppFetch(wallet: PrivateKeyAccount, paidIn: PaidIn = BASE_SEPOLIA_USDC, sent: Sent = []) {
  const mppx = Mppx.create({
    methods: [
      charge({ account: wallet, maxAmount: "50", decimals: 6, authorization: { name: paidIn.name, version: paidIn.version }, networks: [paidIn.chainId] }),
    ],
    polyfill: false,
    fetch: recording(sent),
  } as never);
  return mppx.fetch as typeof fetch;
}

/** A random 32-byte EIP-3009 nonce. */
export const randomNonce = () => `0x${randomBytes(32).toString("hex")}` as `0x${string}`;

/** EIP-3009's TransferWithAuthorization, as the token signs it. */
export const TRANSFER_WITH_AUTHORIZATION = [
  { name: "from", type: "address" },
  { name: "to", type: "address" },
  { name: "value", type: "uint256" },
  { name: "validAfter", type: "uint256" },
  { name: "validBefore", type: "uint256" },
  { name: "nonce", type: "bytes32" },
] as const;

/**
 * An x402 v2 PAYMENT-SIGNATURE header signed by hand from a 402's PAYMENT-REQUIRED header, with
 * whatever the test changes (a past validBefore, another amount): for the attacks the real client
 * would never make.
 */
export async function signX402(
  wallet: PrivateKeyAccount,
  paymentRequired: string,
  overrides: { value?: string; validBefore?: bigint; validAfter?: bigint; resource?: string } = {},
): Promise<string> {
  const required = JSON.parse(Buffer.from(paymentRequired, "base64").toString("utf8"));
  const accepted = required.accepts[0];
  const now = BigInt(Math.floor(Date.now() / 1000));
  const authorization = {
    from: wallet.address,
    to: accepted.payTo as `0x${string}`,
    value: BigInt(overrides.value ?? accepted.amount),
    validAfter: overrides.validAfter ?? now - 60n,
    validBefore: overrides.validBefore ?? now + 300n,
    nonce: randomNonce(),
  };
  const signature = await wallet.signTypedData({
    domain: { name: accepted.extra.name, version: accepted.extra.version, chainId: Number(accepted.network.split(":")[1]), verifyingContract: accepted.asset },
    types: { TransferWithAuthorization: TRANSFER_WITH_AUTHORIZATION },
    primaryType: "TransferWithAuthorization",
    message: authorization,
  });
  const payload = {
    x402Version: 2,
    resource: overrides.resource ? { url: overrides.resource } : required.resource,
    accepted,
    payload: {
      signature,
      authorization: {
        ...authorization,
        value: String(authorization.value),
        validAfter: String(authorization.validAfter),
        validBefore: String(authorization.validBefore),
      },
    },
  };
  return Buffer.from(JSON.stringify(payload)).toString("base64");
}
