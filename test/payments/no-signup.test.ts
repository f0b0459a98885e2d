import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintAgentToken } from "../../core/auth/agent-tokens.js";
import { accounts } from "../../core/db/schema/accounts.js";
import { calls } from "../../core/db/schema/calls.js";
import { paymentSettlements } from "../../core/db/schema/payment-settlements.js";
import { Api } from "../../harness/api.js";
import { expectBalanceIsLedgerSum } from "../billing/support.js";
import { startTestService, type TestService } from "../support/service.js";
import { mppFetch, newWallet, x402Fetch } from "../support/wallet.js";

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000" } });
});
afterAll(() => service?.stop());

const clients = { "x402 (@x402/fetch)": x402Fetch, "MPP (mppx/client)": mppFetch } as const;

/** JSON requests through a payment-aware fetch. */
function through(pay: typeof fetch, base: string, token?: string) {
  return async (method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" };
    if (token) headers.authorization = `Bearer ${token}`;
    const res = await pay(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  };
}

/** The far party says something and hangs up, over the sandbox routes (an agent token drives them). */
async function converse(token: string, callId: string) {
  const far = new Api(service.baseUrl, token);
  expect((await far.post(`/v1/sandbox/calls/${callId}/say`, { text: "Hello from the far side" })).status).toBe(201);
  expect((await far.post(`/v1/sandbox/calls/${callId}/hangup`)).status).toBe(200);
}

describe.each(Object.entries(clients))("a wallet with no account, paying with %s", (_name, client) => {
  it("tops up, gets an agent_token, buys a number, calls, reads the transcript and polls events", async () => {
    const wallet = newWallet();
    const pay = client(wallet);
    const topup = await through(pay, service.baseUrl)("POST", "/v1/billing/topup/x402/pay?amount=5");
    expect(topup.status).toBe(200);
    expect(topup.body).toMatchObject({ credited: "5.000000", balance: "5.000000", currency: "USD", test_money: true, payer: wallet.address });
    expect(topup.body.agent_token).toMatch(/^at_/);
    expect(topup.headers.get("payment-receipt") ?? topup.headers.get("payment-response")).toBeTruthy();

    // From here on, the token: no payment needed while the balance covers the price.
    const call = through(fetch, service.baseUrl, topup.body.agent_token);
    const bought = await call("POST", "/v1/x402/numbers/buy", { area_code: "415" });
    expect(bought.status).toBe(201);
    expect(bought.body.number.expires_at).not.toBeNull();
    const placed = await call("POST", "/v1/x402/calls", { to_number: "+14155550142" });
    expect(placed.status).toBe(201);
    expect(placed.body.status).toBe("in-progress");
    await converse(topup.body.agent_token, placed.body.call_id);
    const transcript = await call("GET", `/v1/x402/calls/${placed.body.call_id}/transcript`);
    expect(transcript.body.map((l: any) => l.text)).toEqual(["Hello from the far side"]);
    const events = await call("GET", "/v1/x402/events");
    expect(events.body.data.map((e: any) => e.event_type)).toEqual(["call.utterance", "call.completed"]);

    // A later top-up from the same wallet, with no credential, mints a new token for the same
    // account; the first stays live, and both are listed as the wallet's.
    const again = await through(pay, service.baseUrl)("GET", "/v1/billing/topup/x402/pay?amount=1");
    expect(again.body.agent_token).toMatch(/^at_/);
    expect(again.body.agent_token).not.toBe(topup.body.agent_token);
    expect(again.body.account_id).toBe(topup.body.account_id);
    const listed = await new Api(service.baseUrl, again.body.agent_token).get("/v1/auth/agent-tokens");
    expect(listed.body.data.map((t: any) => t.minted_by)).toEqual([
      { kind: "wallet", id: wallet.address },
      { kind: "wallet", id: wallet.address },
    ]);
    expect((await call("GET", "/v1/x402/numbers")).status).toBe(200);
    const [account] = await service.core.db.select().from(accounts).where(eq(accounts.walletAddress, wallet.address));
    const [ended] = await service.core.db.select().from(calls).where(eq(calls.callId, placed.body.call_id));
    expect(Math.round(Number(again.body.balance) * 1e6)).toBe(5_000_000 - 1_150_000 + 1_000_000 - ended!.chargedMicros);
    await expectBalanceIsLedgerSum(service.core, account!.accountId);
  });

  it("does the same paying per request, with no token", async () => {
    const wallet = newWallet();
    const call = through(client(wallet), service.baseUrl);
    const bought = await call("POST", "/v1/x402/numbers/buy", { number_type: "local" });
    expect(bought.status).toBe(201);
    expect(bought.body.balance).toBe("0.000000");
    const placed = await call("POST", "/v1/x402/calls", { to_number: "+14155550142" });
    expect(placed.status).toBe(201);
    const [account] = await service.core.db.select().from(accounts).where(eq(accounts.walletAddress, wallet.address));
    const settlements = await service.core.db.select().from(paymentSettlements).where(eq(paymentSettlements.payer, wallet.address));
    expect(settlements.map((s) => s.amountMicros).sort((a, b) => a - b)).toEqual([75_000, 1_150_000]);
    // The far party is driven with the account's token (the wallet itself never asked for one).
    const { agent_token: token } = await mintAgentToken(service.core.db, account!.accountId, { kind: "wallet", id: wallet.address });
    await converse(token, placed.body.call_id);
    const transcript = await call("GET", `/v1/x402/calls/${placed.body.call_id}/transcript`);
    expect(transcript.status).toBe(200);
    expect(transcript.body.map((l: any) => l.text)).toEqual(["Hello from the far side"]);
    const events = await call("GET", "/v1/x402/events");
    expect(events.body.data.map((e: any) => e.event_type)).toEqual(["call.utterance", "call.completed"]);
    await expectBalanceIsLedgerSum(service.core, account!.accountId);
  });

  it("sends a text paying per request: the price is its segments, spent whole", async () => {
    const wallet = newWallet();
    const call = through(client(wallet), service.baseUrl);
    expect((await call("POST", "/v1/x402/numbers/buy", { number_type: "local" })).status).toBe(201);
    const sent = await call("POST", "/v1/x402/messages", { to_number: "+14155550142", text: "a".repeat(161) });
    expect(sent.status).toBe(201);
    expect(sent.body).toMatchObject({ direction: "outbound", status: "queued", segments: 2, to_number: "+14155550142" });
    const [account] = await service.core.db.select().from(accounts).where(eq(accounts.walletAddress, wallet.address));
    const settlements = await service.core.db.select().from(paymentSettlements).where(eq(paymentSettlements.payer, wallet.address));
    expect(settlements.map((s) => s.amountMicros).sort((a, b) => a - b)).toEqual([16_600, 1_150_000]);
    expect(account!.balanceMicros).toBe(0);
    const events = await call("GET", "/v1/x402/events");
    expect(events.body.data.map((e: any) => [e.event_type, e.payload.status])).toEqual([
      ["sms.status", "sent"],
      ["sms.status", "delivered"],
    ]);
    await expectBalanceIsLedgerSum(service.core, account!.accountId);
  });
});
