import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { x402Client } from "@x402/core/client";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { eq } from "drizzle-orm";
import { charge } from "mppx/evm/client";
import { McpClient } from "mppx/mcp-sdk/client";
import type { PrivateKeyAccount } from "viem/accounts";
import { expect } from "vitest";
import type { Core } from "../../core/context.js";
import { accounts } from "../../core/db/schema/accounts.js";
import { ledgerEntries } from "../../core/db/schema/ledger-entries.js";
import { paymentSettlements } from "../../core/db/schema/payment-settlements.js";
import { BASE_SEPOLIA_USDC, type PaidIn } from "../support/wallet.js";

/**
 * An MCP SDK client over Streamable HTTP on `path` (/mcp/x402 by default), with a Bearer token if
 * given. It lists the tools first, as hosts do: the SDK's Client then checks every result's
 * structuredContent against the tool's outputSchema, error results (an unpaid call) included.
 */
export async function mcpClient(baseUrl: string, token?: string, path = "/mcp/x402"): Promise<Client> {
  const client = new Client({ name: "agentline-wallet-tests", version: "1.0.0" });
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(path, baseUrl), { requestInit: { headers } }));
  await client.listTools();
  return client;
}

export type Result = CallToolResult & { receipt?: unknown };

/** Calls a tool, with `_meta` if given. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}, meta?: Record<string, unknown>): Promise<Result> {
  return (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) })) as Result;
}

/** A result that must have succeeded: its structured content, checked against its text. */
export function ok(result: Result): any {
  const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  expect(result.isError ?? false, text).toBe(false);
  expect(JSON.parse(text)).toEqual(result.structuredContent);
  return result.structuredContent;
}

/** An unpaid answer: x402's PaymentRequired as an error result (and as its text), MPP's challenges in `_meta`. */
export function paymentRequired(result: Result): PaymentRequired {
  expect(result.isError).toBe(true);
  const required = result.structuredContent as unknown as PaymentRequired;
  expect(required).toMatchObject({ x402Version: 2, accepts: [expect.objectContaining({ scheme: "exact" })], resource: { url: expect.any(String) } });
  expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(required);
  const mpp = result._meta?.["org.paymentauth/payment-required"] as { challenges: Array<{ method: string; intent: string }> };
  expect(mpp.challenges[0]).toMatchObject({ method: "evm", intent: "charge" });
  return required;
}

/** @x402/core's client with @x402/evm's exact scheme: the PaymentPayload for a PaymentRequired. */
export function x402Payer(wallet: PrivateKeyAccount, paidIn: PaidIn = BASE_SEPOLIA_USDC) {
  const client = new x402Client().register(paidIn.network, new ExactEvmScheme(wallet));
  client.setSpendControls({ maxAmountPerPayment: "$50", allowedAssets: [{ network: paidIn.network, asset: paidIn.asset, maxAmountPerPayment: "50000000" }] });
  return (required: PaymentRequired): Promise<PaymentPayload> => client.createPaymentPayload(required);
}

/** Calls a paid tool the x402 way: unpaid first, then again with the payment the wallet signs for the answer. */
export async function payX402(client: Client, wallet: PrivateKeyAccount, name: string, args: Record<string, unknown> = {}, paidIn?: PaidIn) {
  const required = paymentRequired(await call(client, name, args));
  const payment = await x402Payer(wallet, paidIn)(required);
  return { result: await call(client, name, args, { "x402/payment": payment }), payment, required };
}

/** mppx's MCP client, wrapping an SDK client so that it pays MPP challenges with the wallet (up to $50 a call). */
export function mppWrap(client: Client, wallet: PrivateKeyAccount, paidIn: PaidIn = BASE_SEPOLIA_USDC): Client {
  return McpClient.wrap(client, {
    methods: [
      charge({ account: wallet, maxAmount: "50", decimals: 6, authorization: { name: paidIn.name, version: paidIn.version }, networks: [paidIn.chainId] }),
    ],
  } as never) as unknown as Client;
}

/** What the service holds for a wallet: its account's balance, ledger rows, and the payments claimed from it. */
export async function holdings(core: Core, wallet: PrivateKeyAccount) {
  const [account] = await core.db.select().from(accounts).where(eq(accounts.walletAddress, wallet.address));
  const ledger = account ? await core.db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, account.accountId)) : [];
  const settlements = await core.db.select().from(paymentSettlements).where(eq(paymentSettlements.payer, wallet.address));
  return { accountId: account?.accountId ?? null, balance: account?.balanceMicros ?? 0, ledger: ledger.length, settlements: settlements.length };
}
