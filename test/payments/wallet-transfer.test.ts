import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintAgentToken } from "../../core/auth/agent-tokens.js";
import { calls } from "../../core/db/schema/calls.js";
import { ledgerEntries } from "../../core/db/schema/ledger-entries.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { expectBalanceIsLedgerSum } from "../billing/support.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";
import { waitFor } from "../support/twilio/service.js";
import { newWallet, x402Fetch } from "../support/wallet.js";

// POST /v1/x402/calls/{call_id}/transfer: a wallet hands its own call to a person, with its
// agent_token or paying for the request (priced as a call: five minutes of outbound talk).
let service: TestService;
beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000" } });
});
afterAll(() => service?.stop());

async function walletWithCall() {
  const account = await createAccount(service.core);
  const { agent_token: token } = await mintAgentToken(service.core.db, account.accountId, { kind: "api_key", id: account.keyId });
  const wallet = new Api(service.baseUrl, token);
  expect((await wallet.post("/v1/x402/numbers/buy", {})).status).toBe(201);
  const call = await wallet.post("/v1/x402/calls", { to_number: "+14155550142" });
  expect(call.body.status).toBe("in-progress");
  return { account, wallet, token, callId: call.body.call_id as string };
}

describe("POST /v1/x402/calls/{call_id}/transfer", () => {
  it("transfers the wallet's own call with its agent_token, billing the leg from its balance", async () => {
    const { account, wallet, callId } = await walletWithCall();
    const res = await wallet.post(`/v1/x402/calls/${callId}/transfer`, { to_number: "+14155557777", mode: "warm", whisper: "A wallet's caller." });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ call_id: callId, transfer_status: "dialing" });
    await waitFor(async () => (await service.core.db.select().from(calls).where(eq(calls.callId, callId)))[0]!.transferStatus === "bridged");
    const ended = await wallet.post(`/v1/x402/calls/${callId}/hangup`);
    expect(ended.body).toMatchObject({ status: "completed", transfer_status: "bridged", transferred_to: "+14155557777" });
    const rows = await service.core.db.select().from(ledgerEntries).where(eq(ledgerEntries.callId, callId));
    expect(rows.some((r) => r.item === "call.transfer")).toBe(true);
    await expectBalanceIsLedgerSum(service.core, account.accountId);
  });

  it("answers 404 for another wallet's call, leaving it untouched", async () => {
    const mine = await walletWithCall();
    const theirs = await walletWithCall();
    const refused = await mine.wallet.post(`/v1/x402/calls/${theirs.callId}/transfer`, { to_number: "+14155557777" });
    expect(refused.status).toBe(404);
    const owner = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
    const keyCall = await answeredCall(owner, (await agentWithNumber(owner)).agentId);
    expect((await mine.wallet.post(`/v1/x402/calls/${keyCall}/transfer`, { to_number: "+14155557777" })).status).toBe(404);
    expect((await owner.get(`/v1/calls/${keyCall}`)).body.transfer_status).toBeNull();
  });

  it("asks a caller with no credential for a call's price", async () => {
    const res = await fetch(`${service.baseUrl}/v1/x402/calls/call_00000000000000000000000000/transfer`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ to_number: "+14155557777" }),
    });
    expect(res.status).toBe(402);
    const challenge = (await res.json()) as any;
    // Five minutes of outbound talk at 0.015 a minute: 0.075 USD, in the token's six decimals.
    expect(JSON.stringify(challenge)).toContain("75000");
  });

  it("takes an x402 payment from another wallet, and still answers 404 for a call that is not its own", async () => {
    const { callId, token } = await walletWithCall();
    // Another wallet paying for a request about a call that is not its own: paid, then 404.
    const pay = x402Fetch(newWallet());
    const res = await pay(`${service.baseUrl}/v1/x402/calls/${callId}/transfer`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ to_number: "+14155557777" }),
    });
    expect(res.status).toBe(404);
    expect((await new Api(service.baseUrl, token).post(`/v1/x402/calls/${callId}/hangup`)).body.transfer_status).toBeNull();
  });
});
