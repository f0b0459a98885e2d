// A wallet with no account tops up with x402 (the stock @x402/fetch client, with a spend cap),
// buys a number and places a call: `npm run example:wallet`. AGENTLINE_BASE_URL is the service;
// WALLET_PRIVATE_KEY the wallet (default: a new one; the sandbox's local payments need no funds);
// SPEND_CAP_USD the most one payment may cost (default 5); TOPUP_USD the top-up (default: the
// cap); TO_NUMBER whom to call.

import { Agentline, unwrap } from "@agentline/sdk";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

const base = (process.env.AGENTLINE_BASE_URL ?? "http://127.0.0.1:8080").replace(/\/+$/, "");
const wallet = privateKeyToAccount((process.env.WALLET_PRIVATE_KEY as `0x${string}` | undefined) ?? generatePrivateKey());
const capUsd = Number(process.env.SPEND_CAP_USD ?? "5");
const topupUsd = process.env.TOPUP_USD ?? String(capUsd);

// The payment terms: which network and token the service is paid in.
const anonymous = new Agentline({ baseUrl: base, apiKey: "" });
const terms = unwrap(await anonymous.api.GET("/.well-known/agent-payments.json"));
const { network, address: asset, decimals } = terms.assets[0]!;
const client = new x402Client().register(network as `eip155:${number}`, new ExactEvmScheme(wallet));
client.setSpendControls({
  maxAmountPerPayment: `$${capUsd}`,
  allowedAssets: [{ network: network as `eip155:${number}`, asset, maxAmountPerPayment: String(Math.round(capUsd * 10 ** decimals)) }],
});
const pay = wrapFetchWithPayment(fetch, client);

// 402 → the client signs the payment (if within the cap) → the retry is credited; the answer
// carries an agent_token.
console.log(`wallet ${wallet.address} tops up ${topupUsd} USD, paying at most ${capUsd} USD at a time`);
const topup = await pay(`${base}/v1/billing/topup/x402/pay?amount=${topupUsd}`, { method: "POST" });
if (!topup.ok) throw new Error(`top-up failed: ${topup.status} ${await topup.text()}`);
const { agent_token, balance } = (await topup.json()) as { agent_token: string; balance: string };
console.log(`topped up; balance ${balance} USD`);

// From here on the agent_token is the key of the wallet's account.
const agentline = new Agentline({ baseUrl: base, apiKey: agent_token });
const bought = unwrap(await agentline.api.POST("/v1/x402/numbers/buy", { body: { area_code: "415" } }));
const call = unwrap(await agentline.api.POST("/v1/x402/calls", { body: { to_number: process.env.TO_NUMBER ?? "+14155550142" } }));
console.log(`calling ${call.to_number} from ${bought.number.phone_number}: ${call.call_id} ${call.status}`);

const service = unwrap(await anonymous.api.GET("/.well-known/service.json"));
if (service.carrier === "sandbox" && call.status === "in-progress") {
  // In the sandbox, play the other end: say something, then hang up.
  const callPath = { params: { path: { call_id: call.call_id } } };
  unwrap(await agentline.api.POST("/v1/sandbox/calls/{call_id}/say", { ...callPath, body: { text: "Hello, who is paying for this call?" } }));
  unwrap(await agentline.api.POST("/v1/sandbox/calls/{call_id}/hangup", callPath));
  const transcript = unwrap(await agentline.api.GET("/v1/x402/calls/{call_id}/transcript", callPath));
  for (const line of transcript) console.log(`${line.role}: ${line.text}`);
}
console.log(JSON.stringify({ payer: wallet.address, number: bought.number.phone_number, call_id: call.call_id, balance: bought.balance }));
