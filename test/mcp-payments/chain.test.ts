import { eq } from "drizzle-orm";
import { getAddress } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { numbers } from "../../core/db/schema/numbers.js";
import { ANVIL_KEYS, deployFiatToken, startAnvil } from "../support/chain.js";
import { startFacilitator } from "../support/facilitator.js";
import { startTestService, type TestService } from "../support/service.js";
import { newWallet, type PaidIn } from "../support/wallet.js";
import { call, holdings, mcpClient, mppWrap, ok, paymentRequired, x402Payer } from "./support.js";

// /mcp/x402 on a real local chain: PAYMENTS_MODE=chain (the in-process facilitator settles
// transferWithAuthorization on anvil, on Circle's FiatToken), and a remote facilitator's
// stand-in whose settlement fails.
let anvil: Awaited<ReturnType<typeof startAnvil>>;
let usdc: Awaited<ReturnType<typeof deployFiatToken>>;
let service: TestService;
let paidIn: PaidIn;
const payee = privateKeyToAccount(ANVIL_KEYS.payee).address;
const terms = () => ({
  X402_NETWORK: paidIn.network,
  X402_ASSET: usdc.token,
  X402_ASSET_NAME: usdc.name,
  X402_ASSET_VERSION: usdc.version,
  X402_PAYEE: payee,
});

beforeAll(async () => {
  anvil = await startAnvil();
  usdc = await deployFiatToken(anvil.rpcUrl, anvil.chainId);
  paidIn = { network: `eip155:${anvil.chainId}`, chainId: anvil.chainId, asset: usdc.token, name: usdc.name, version: usdc.version };
  service = await startTestService({
    env: { PAYMENTS_MODE: "chain", ...terms(), X402_RPC_URL: anvil.rpcUrl, X402_RELAYER_PRIVATE_KEY: ANVIL_KEYS.relayer },
  });
}, 120_000);
afterAll(async () => {
  await service?.stop();
  anvil?.stop();
});

describe("chain mode (anvil, FiatToken)", () => {
  it("x402 (@x402/core's client): buy_number moves exactly the price on chain, once", async () => {
    const wallet = newWallet();
    await usdc.mint(wallet.address, 10_000_000n);
    const payeeBefore = await usdc.balanceOf(payee);
    const client = await mcpClient(service.baseUrl);
    const required = paymentRequired(await call(client, "buy_number", { number_type: "local" }));
    expect(required.accepts[0]).toMatchObject({ network: paidIn.network, asset: getAddress(usdc.token), payTo: payee, amount: "1150000" });
    const payment = await x402Payer(wallet, paidIn)(required);
    const result = await call(client, "buy_number", { number_type: "local" }, { "x402/payment": payment });
    const purchase = ok(result);
    expect(purchase.agent_token).toMatch(/^at_/);
    const receipt = result._meta?.["x402/payment-response"] as { success: boolean; transaction: string };
    expect(receipt).toMatchObject({ success: true, network: paidIn.network });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await usdc.balanceOf(wallet.address)).toBe(10_000_000n - 1_150_000n);
    expect(await usdc.balanceOf(payee)).toBe(payeeBefore + 1_150_000n);
    // The same payment again moves nothing more.
    paymentRequired(await call(client, "buy_number", { number_type: "local" }, { "x402/payment": payment }));
    expect(await usdc.balanceOf(wallet.address)).toBe(10_000_000n - 1_150_000n);
    await client.close();
  });

  it("MPP (mppx's McpClient.wrap): top_up then get_agent, each settled on chain", async () => {
    const wallet = newWallet();
    await usdc.mint(wallet.address, 10_000_000n);
    const client = mppWrap(await mcpClient(service.baseUrl), wallet, paidIn);
    const topped = await call(client, "top_up", { amount: "3" });
    expect(ok(topped)).toMatchObject({ credited: "3.000000", balance: "3.000000", test_money: false, payer: wallet.address });
    expect(topped._meta?.["org.paymentauth/receipt"]).toMatchObject({ method: "evm", status: "success", reference: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await usdc.balanceOf(wallet.address)).toBe(7_000_000n);
    const agent = await call(client, "get_agent");
    // No agent yet (it comes with the first number): refused after paying, the payment kept on the balance.
    expect(agent.isError).toBe(true);
    expect((agent.content[0] as { text: string }).text).toMatch(/credited to this wallet's balance/);
    // The top-up answered the wallet's token already: the refusal mints none.
    expect(agent._meta?.["agentline/agent_token"]).toBeUndefined();
    expect(await usdc.balanceOf(wallet.address)).toBe(6_999_000n);
    expect(await holdings(service.core, wallet)).toMatchObject({ balance: 3_001_000, settlements: 2 });
    await client.close();
  });
});

describe("facilitator mode, a settlement that fails at the facilitator", () => {
  it.each(["refused", "broken"] as const)("(%s): the call is refused, nothing moves or changes, and the same payment works once it recovers", async (how) => {
    const facilitator = await startFacilitator(anvil.rpcUrl, anvil.chainId, ANVIL_KEYS.relayer);
    const remote = await startTestService({ env: { PAYMENTS_MODE: "facilitator", ...terms(), X402_FACILITATOR_URL: facilitator.url } });
    try {
      const wallet = newWallet();
      await usdc.mint(wallet.address, 5_000_000n);
      const client = await mcpClient(remote.baseUrl);
      const required = paymentRequired(await call(client, "buy_number", { number_type: "local" }));
      const payment = await x402Payer(wallet, paidIn)(required);
      facilitator.failSettlements(how);
      const failed = await call(client, "buy_number", { number_type: "local" }, { "x402/payment": payment });
      expect((paymentRequired(failed) as { error?: string }).error).toMatch(/Payment refused/);
      expect(facilitator.calls.settle).toBe(1);
      expect(await usdc.balanceOf(wallet.address)).toBe(5_000_000n);
      expect(await holdings(remote.core, wallet)).toEqual({ accountId: null, balance: 0, ledger: 0, settlements: 0 });
      expect(await remote.core.db.select().from(numbers)).toEqual([]);

      facilitator.failSettlements("none");
      const purchase = ok(await call(client, "buy_number", { number_type: "local" }, { "x402/payment": payment }));
      expect(purchase.number.number_id).toMatch(/^num_/);
      expect(await usdc.balanceOf(wallet.address)).toBe(5_000_000n - 1_150_000n);
      const { accountId } = await holdings(remote.core, wallet);
      expect(await remote.core.db.select().from(numbers).where(eq(numbers.accountId, accountId!))).toHaveLength(1);
      await client.close();
    } finally {
      await remote.stop();
      await facilitator.close();
    }
  });
});
