import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintAgentToken } from "../../core/auth/agent-tokens.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

/** A wallet with balance, its agent_token, and a live call of its own. */
async function walletWithCall() {
  const account = await createAccount(service.core);
  const { agent_token: token } = await mintAgentToken(service.core.db, account.accountId, { kind: "api_key", id: account.keyId });
  const wallet = new Api(service.baseUrl, token);
  expect((await wallet.post("/v1/x402/numbers/buy", {})).status).toBe(201);
  const call = await wallet.post("/v1/x402/calls", { to_number: "+14155550142" });
  expect(call.body.status).toBe("in-progress");
  return { wallet, token, callId: call.body.call_id as string };
}

describe("POST /v1/x402/calls/{call_id}/hangup", () => {
  it("hangs up the wallet's own call, and returns an ended call unchanged", async () => {
    const { wallet, callId } = await walletWithCall();
    const hung = await wallet.post(`/v1/x402/calls/${callId}/hangup`);
    expect(hung.status).toBe(200);
    expect(hung.body).toMatchObject({ call_id: callId, status: "completed", ended_by: "agent" });
    const again = await wallet.post(`/v1/x402/calls/${callId}/hangup`);
    expect(again.body).toMatchObject({ call_id: callId, status: "completed", ended_at: hung.body.ended_at });
  });

  it("answers 404 for another wallet's call, and for an API key account's call, leaving them up", async () => {
    const mine = await walletWithCall();
    const theirs = await walletWithCall();
    const owner = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
    const keyCall = await answeredCall(owner, (await agentWithNumber(owner)).agentId);
    for (const callId of [theirs.callId, keyCall]) {
      const refused = await mine.wallet.post(`/v1/x402/calls/${callId}/hangup`);
      expect(refused.status).toBe(404);
      expect(refused.body.code).toBe("not_found");
    }
    expect((await owner.get(`/v1/calls/${keyCall}`)).body.status).toBe("in-progress");
    expect((await theirs.wallet.post(`/v1/x402/calls/${theirs.callId}/hangup`)).body.status).toBe("completed");
  });
});

describe("a credential on a route that does not take it", () => {
  it("says which credential the route takes instead of calling it an invalid API key", async () => {
    const { token } = await walletWithCall();
    const withToken = await new Api(service.baseUrl, token).get("/v1/agents");
    expect(withToken.status).toBe(401);
    expect(withToken.body.detail).toBe(
      "This route takes an API key ('Authorization: Bearer sk_...'), not a wallet's agent_token: it works on the /v1/x402 routes, the sandbox routes and /mcp.",
    );
    const withPushToken = await new Api(service.baseUrl, "pt_not_for_this_route").get("/v1/agents");
    expect(withPushToken.body.detail).toBe(
      "This route takes an API key ('Authorization: Bearer sk_...'), not a push token: it authorizes only POST /v1/calls/{call_id}/context for its own call.",
    );
    const revoked = await new Api(service.baseUrl, "sk_not_a_real_key").get("/v1/agents");
    expect(revoked.body.detail).toBe("The API key is invalid or has been revoked.");
  });
});
