import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { PaymentRequired } from "@x402/core/types";
import { eq } from "drizzle-orm";
import { Credential, Mcp } from "mppx";
import { charge } from "mppx/evm/client";
import type { PrivateKeyAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { numbers } from "../../core/db/schema/numbers.js";
import { startTestService, type TestService } from "../support/service.js";
import { BASE_SEPOLIA_USDC, newWallet, signX402 } from "../support/wallet.js";
import { call, holdings, mcpClient, ok, paymentRequired, payX402, type Result, x402Payer } from "./support.js";

// Every refused payment on /mcp/x402 leaves everything as it was: no account, balance, ledger
// row or settlement for the wallet, no number bought, no call placed.
let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

const NOTHING = { accountId: null, balance: 0, ledger: 0, settlements: 0 };
const encode = (required: PaymentRequired) => Buffer.from(JSON.stringify(required)).toString("base64");

/** A refusal: the PaymentRequired again, naming why. */
function refused(result: Result, why: RegExp): void {
  const required = paymentRequired(result) as PaymentRequired & { error: string };
  expect(required.error).toMatch(why);
}

/** The unpaid answer for buy_number (a local number) and a wallet. */
async function unpaidBuy() {
  const client = await mcpClient(service.baseUrl);
  const required = paymentRequired(await call(client, "buy_number", { number_type: "local" }));
  return { client, required, wallet: newWallet() };
}

async function numbersOf(wallet: PrivateKeyAccount) {
  const { accountId } = await holdings(service.core, wallet);
  return accountId ? await service.core.db.select().from(numbers).where(eq(numbers.accountId, accountId)) : [];
}

describe("an x402 payment refused, with nothing changed", () => {
  it.each([
    ["for a smaller amount than the price", (r: PaymentRequired) => r, { value: "1000" }, /amount mismatch/],
    [
      "whose accepted amount was lowered",
      (r: PaymentRequired) => ({ ...r, accepts: [{ ...r.accepts[0]!, amount: "1000" }] }),
      {},
      /does not match route requirements/,
    ],
    [
      "to another payee",
      (r: PaymentRequired) => ({ ...r, accepts: [{ ...r.accepts[0]!, payTo: "0x4444444444444444444444444444444444444444" }] }),
      {},
      /does not match route requirements/,
    ],
    [
      "on another network",
      (r: PaymentRequired) => ({ ...r, accepts: [{ ...r.accepts[0]!, network: "eip155:8453" as const }] }),
      {},
      /does not match route requirements/,
    ],
    [
      "in another asset",
      (r: PaymentRequired) => ({ ...r, accepts: [{ ...r.accepts[0]!, asset: "0x5555555555555555555555555555555555555555" }] }),
      {},
      /does not match route requirements/,
    ],
    ["whose authorization has expired", (r: PaymentRequired) => r, { validBefore: BigInt(Math.floor(Date.now() / 1000) - 10) }, /has expired/],
    [
      "made for another tool (its resource names get_agent)",
      (r: PaymentRequired) => r,
      { resource: "mcp://tool/get_agent" },
      /resource does not match route resource/,
    ],
  ] as const)("%s", async (_case, change, overrides, why) => {
    const { client, required, wallet } = await unpaidBuy();
    const payment = await signX402(wallet, encode(change(required) as PaymentRequired), overrides);
    refused(await call(client, "buy_number", { number_type: "local" }, { "x402/payment": payment }), why);
    expect(await holdings(service.core, wallet)).toEqual(NOTHING);
    await client.close();
  });

  it("a payload that is not one (garbage base64, a wrong object) is refused by name", async () => {
    const { client, wallet } = await unpaidBuy();
    refused(await call(client, "buy_number", { number_type: "local" }, { "x402/payment": "bm90IGEgcGF5bWVudA==" }), /Payment refused: \S/);
    refused(await call(client, "buy_number", { number_type: "local" }, { "x402/payment": { x402Version: 2 } }), /Payment refused: \S/);
    expect(await holdings(service.core, wallet)).toEqual(NOTHING);
    await client.close();
  });

  it("a payment signed for get_agent, presented on list_numbers (the same price): refused", async () => {
    const client = await mcpClient(service.baseUrl);
    const wallet = newWallet();
    const forAgent = paymentRequired(await call(client, "get_agent"));
    const payment = await x402Payer(wallet)(forAgent);
    refused(await call(client, "list_numbers", {}, { "x402/payment": payment }), /resource/);
    expect(await holdings(service.core, wallet)).toEqual(NOTHING);
    await client.close();
  });
});

describe("a payment used again", () => {
  it("on the same tool, or on another, is refused and buys nothing twice", async () => {
    const client = await mcpClient(service.baseUrl);
    const wallet = newWallet();
    const { result, payment } = await payX402(client, wallet, "buy_number", { number_type: "local" });
    ok(result);
    const after = await holdings(service.core, wallet);
    expect(after).toMatchObject({ settlements: 1, ledger: 2 });
    refused(await call(client, "buy_number", { number_type: "local" }, { "x402/payment": payment }), /already been used/);
    refused(await call(client, "buy_number", { number_type: "mobile" }, { "x402/payment": payment }), /\S/);
    refused(await call(client, "place_call", { to_number: "+14155550100" }, { "x402/payment": payment }), /\S/);
    expect(await holdings(service.core, wallet)).toEqual(after);
    expect(await numbersOf(wallet)).toHaveLength(1);
    await client.close();
  });

  it("by 20 calls at once: exactly one is served, one number bought, one settlement", async () => {
    const client = await mcpClient(service.baseUrl);
    const wallet = newWallet();
    const required = paymentRequired(await call(client, "buy_number", { number_type: "local" }));
    const payment = await x402Payer(wallet)(required);
    const clients = await Promise.all(Array.from({ length: 20 }, () => mcpClient(service.baseUrl)));
    const results = await Promise.all(clients.map((c) => call(c, "buy_number", { number_type: "local" }, { "x402/payment": payment })));
    expect(results.filter((r) => !r.isError)).toHaveLength(1);
    for (const r of results.filter((r) => r.isError)) refused(r, /\S/);
    expect(await holdings(service.core, wallet)).toMatchObject({ settlements: 1, ledger: 2, balance: 0 });
    expect(await numbersOf(wallet)).toHaveLength(1);
    await Promise.all([client, ...clients].map((c) => c.close()));
  });
});

describe("an MPP credential that fails verification: JSON-RPC -32043, nothing changed", () => {
  const mpp = (wallet: PrivateKeyAccount) =>
    charge({ account: wallet, maxAmount: "50", decimals: 6, authorization: { name: BASE_SEPOLIA_USDC.name, version: BASE_SEPOLIA_USDC.version } } as never);

  /** A credential the wallet makes for the MPP challenge of an unpaid call of `tool`. */
  async function credentialFor(wallet: PrivateKeyAccount, tool: string, args: Record<string, unknown> = {}) {
    const client = await mcpClient(service.baseUrl);
    const unpaid = await call(client, tool, args);
    const [challenge] = (unpaid._meta![Mcp.paymentRequiredMetaKey] as { challenges: unknown[] }).challenges;
    await client.close();
    return Credential.deserialize(await mpp(wallet).createCredential({ challenge } as never));
  }

  async function rejects(tool: string, args: Record<string, unknown>, credential: unknown) {
    const client = await mcpClient(service.baseUrl);
    const error = await call(client, tool, args, { [Mcp.credentialMetaKey]: credential }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await client.close();
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32043);
    expect((error as McpError).data).toMatchObject({ httpStatus: 402, challenges: [expect.objectContaining({ method: "evm", intent: "charge" })] });
    return error as McpError;
  }

  it("a credential for get_agent's challenge presented on list_numbers (the same price)", async () => {
    const wallet = newWallet();
    await rejects("list_numbers", {}, await credentialFor(wallet, "get_agent"));
    expect(await holdings(service.core, wallet)).toEqual(NOTHING);
  });

  it("a credential whose signature was tampered with", async () => {
    const wallet = newWallet();
    const credential = await credentialFor(wallet, "get_agent");
    const payload = credential.payload as { signature: string };
    const tampered = { ...credential, payload: { ...payload, signature: `${payload.signature.slice(0, -4)}0000` } };
    await rejects("get_agent", {}, tampered);
    expect(await holdings(service.core, wallet)).toEqual(NOTHING);
  });

  it("a credential that is not one", async () => {
    const error = await rejects("get_agent", {}, { challenge: { id: "x" }, payload: {} });
    expect(error.message).toMatch(/not an MPP credential/);
  });

  it("one credential on 20 calls at once: one is served, the others -32043, one number bought", async () => {
    const wallet = newWallet();
    const credential = await credentialFor(wallet, "buy_number", { number_type: "local" });
    const clients = await Promise.all(Array.from({ length: 20 }, () => mcpClient(service.baseUrl)));
    const outcomes = await Promise.allSettled(clients.map((c) => call(c, "buy_number", { number_type: "local" }, { [Mcp.credentialMetaKey]: credential })));
    const served = outcomes.filter((o) => o.status === "fulfilled");
    expect(served).toHaveLength(1);
    expect(served.map((o) => (o as PromiseFulfilledResult<Result>).value.isError ?? false)).toEqual([false]);
    for (const o of outcomes.filter((o) => o.status === "rejected")) expect(((o as PromiseRejectedResult).reason as McpError).code).toBe(-32043);
    expect(await holdings(service.core, wallet)).toMatchObject({ settlements: 1, ledger: 2, balance: 0 });
    expect(await numbersOf(wallet)).toHaveLength(1);
    await Promise.all(clients.map((c) => c.close()));
  });

  it("a credential used a second time", async () => {
    const wallet = newWallet();
    const credential = await credentialFor(wallet, "buy_number", { number_type: "local" });
    const client = await mcpClient(service.baseUrl);
    ok(await call(client, "buy_number", { number_type: "local" }, { [Mcp.credentialMetaKey]: credential }));
    await client.close();
    const after = await holdings(service.core, wallet);
    await rejects("buy_number", { number_type: "local" }, credential);
    expect(await holdings(service.core, wallet)).toEqual(after);
    expect(await numbersOf(wallet)).toHaveLength(1);
  });
});
