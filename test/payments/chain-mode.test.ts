import { eq } from "drizzle-orm";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accounts } from "../../core/db/schema/accounts.js";
import { ledgerEntries } from "../../core/db/schema/ledger-entries.js";
import { paymentSettlements } from "../../core/db/schema/payment-settlements.js";
import { ANVIL_KEYS, deployFiatToken, startAnvil } from "../support/chain.js";
import { startFacilitator } from "../support/facilitator.js";
import { startTestService, type TestService } from "../support/service.js";
import { mppFetch, newWallet, type PaidIn, paidRequest, type Sent, x402Fetch } from "../support/wallet.js";

// PAYMENTS_MODE=chain: the in-process x402 facilitator settles transferWithAuthorization on a
// real local chain (anvil), on Circle's FiatToken contract, from a relayer account.
let anvil: Awaited<ReturnType<typeof startAnvil>>;
let usdc: Awaited<ReturnType<typeof deployFiatToken>>;
let service: TestService;
let paidIn: PaidIn;
const payee = privateKeyToAccount(ANVIL_KEYS.payee).address;

beforeAll(async () => {
  anvil = await startAnvil();
  usdc = await deployFiatToken(anvil.rpcUrl, anvil.chainId);
  paidIn = { network: `eip155:${anvil.chainId}`, chainId: anvil.chainId, asset: usdc.token, name: usdc.name, version: usdc.version };
  service = await startTestService({
    env: {
      PAYMENTS_MODE: "chain",
      X402_NETWORK: paidIn.network,
      X402_ASSET: usdc.token,
      X402_ASSET_NAME: usdc.name,
      X402_ASSET_VERSION: usdc.version,
      X402_PAYEE: payee,
      X402_RPC_URL: anvil.rpcUrl,
      X402_RELAYER_PRIVATE_KEY: ANVIL_KEYS.relayer,
    },
  });
}, 120_000);
afterAll(async () => {
  await service?.stop();
  anvil?.stop();
});

describe("chain mode (anvil, FiatToken)", () => {
  it.each([
    ["x402", x402Fetch],
    ["MPP", mppFetch],
  ] as const)("a %s top-up moves exactly the amount on chain and credits exactly that", async (_name, client) => {
    const wallet = newWallet();
    await usdc.mint(wallet.address, 100_000_000n);
    const [payerBefore, payeeBefore] = [await usdc.balanceOf(wallet.address), await usdc.balanceOf(payee)];
    const res = await client(wallet, paidIn)(`${service.baseUrl}/v1/billing/topup/x402/pay?amount=5.25`, { method: "POST" });
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ credited: "5.250000", balance: "5.250000", test_money: false });
    expect(await usdc.balanceOf(wallet.address)).toBe(payerBefore - 5_250_000n);
    expect(await usdc.balanceOf(payee)).toBe(payeeBefore + 5_250_000n);
    const [account] = await service.core.db.select().from(accounts).where(eq(accounts.walletAddress, wallet.address));
    const lines = await service.core.db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, account!.accountId));
    expect(lines.map((l) => [l.category, l.amountMicros])).toEqual([["topup", 5_250_000]]);
    const [settlement] = await service.core.db.select().from(paymentSettlements).where(eq(paymentSettlements.payer, wallet.address));
    expect(settlement).toMatchObject({ mode: "chain", status: "settled", amountMicros: 5_250_000 });
    expect(settlement!.reference).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it("settles concurrent payments one after another, so the relayer's nonces never clash", async () => {
    const wallets = [newWallet(), newWallet(), newWallet(), newWallet()];
    for (const w of wallets) await usdc.mint(w.address, 10_000_000n);
    const payeeBefore = await usdc.balanceOf(payee);
    const answers = await Promise.all(wallets.map((w) => x402Fetch(w, paidIn)(`${service.baseUrl}/v1/billing/topup/x402/pay?amount=1`, { method: "POST" })));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(await usdc.balanceOf(payee)).toBe(payeeBefore + 4_000_000n);
  });

  it("refuses a payment the payer cannot cover on chain, and takes nothing", async () => {
    const broke = newWallet();
    const res = await x402Fetch(broke, paidIn)(`${service.baseUrl}/v1/billing/topup/x402/pay?amount=2`, { method: "POST" });
    expect(res.status).toBe(402);
    expect(await service.core.db.select().from(accounts).where(eq(accounts.walletAddress, broke.address))).toEqual([]);
    expect(await service.core.db.select().from(paymentSettlements).where(eq(paymentSettlements.payer, broke.address))).toEqual([]);
  });
});

/** A service settling through a remote facilitator at url. */
const serviceBehind = (url: string) =>
  startTestService({
    env: {
      PAYMENTS_MODE: "facilitator",
      X402_NETWORK: paidIn.network,
      X402_ASSET: usdc.token,
      X402_ASSET_NAME: usdc.name,
      X402_ASSET_VERSION: usdc.version,
      X402_PAYEE: payee,
      X402_FACILITATOR_URL: url,
    },
  });

describe("facilitator mode (a remote facilitator's stand-in on loopback)", () => {
  it("settles through the facilitator over HTTP, moves exactly the amount, and credits exactly that", async () => {
    const facilitator = await startFacilitator(anvil.rpcUrl, anvil.chainId, ANVIL_KEYS.relayer);
    const remote = await serviceBehind(facilitator.url);
    try {
      const wallet = newWallet();
      await usdc.mint(wallet.address, 10_000_000n);
      const payeeBefore = await usdc.balanceOf(payee);
      for (const client of [x402Fetch, mppFetch]) {
        const res = await client(wallet, paidIn)(`${remote.baseUrl}/v1/billing/topup/x402/pay?amount=1.5`, { method: "POST" });
        expect(res.status).toBe(200);
      }
      expect(await usdc.balanceOf(wallet.address)).toBe(7_000_000n);
      expect(await usdc.balanceOf(payee)).toBe(payeeBefore + 3_000_000n);
      expect(facilitator.calls.settle).toBe(2);
      const [account] = await remote.core.db.select().from(accounts).where(eq(accounts.walletAddress, wallet.address));
      expect(account!.balanceMicros).toBe(3_000_000);
      const settlements = await remote.core.db.select().from(paymentSettlements).where(eq(paymentSettlements.payer, wallet.address));
      expect(settlements.map((s) => [s.mode, s.status])).toEqual([
        ["facilitator", "settled"],
        ["facilitator", "settled"],
      ]);
    } finally {
      await remote.stop();
      await facilitator.close();
    }
  });

  it.each([
    ["answers success: false to", "refused"],
    ["fails with a 500 on", "broken"],
  ] as const)("keeps no claim on a payment when the facilitator %s its settlement: the same payment is good once it recovers", async (_label, how) => {
    const facilitator = await startFacilitator(anvil.rpcUrl, anvil.chainId, ANVIL_KEYS.relayer);
    const remote = await serviceBehind(facilitator.url);
    try {
      const wallet = newWallet();
      await usdc.mint(wallet.address, 10_000_000n);
      facilitator.failSettlements(how);
      const sent: Sent = [];
      const failed = await x402Fetch(wallet, paidIn, sent)(`${remote.baseUrl}/v1/billing/topup/x402/pay?amount=2`, { method: "POST" });
      expect(failed.status).toBe(402);
      expect(facilitator.calls.settle).toBe(1);
      expect(await usdc.balanceOf(wallet.address)).toBe(10_000_000n);
      expect(await remote.core.db.select().from(paymentSettlements).where(eq(paymentSettlements.payer, wallet.address))).toEqual([]);

      // The wallet's authorization was never spent, so presenting it again must work.
      facilitator.failSettlements("none");
      const paid = paidRequest(sent);
      const retried = await fetch(paid.url, { method: paid.method, headers: paid.headers });
      expect(retried.status, await retried.clone().text()).toBe(200);
      expect(((await retried.json()) as any).credited).toBe("2.000000");
      expect(await usdc.balanceOf(wallet.address)).toBe(8_000_000n);
      const settlements = await remote.core.db.select().from(paymentSettlements).where(eq(paymentSettlements.payer, wallet.address));
      expect(settlements.map((s) => s.status)).toEqual(["settled"]);
    } finally {
      await remote.stop();
      await facilitator.close();
    }
  });
});
