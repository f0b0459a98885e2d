import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { newWallet, x402Fetch } from "../support/wallet.js";

// What the paid routes' prices say about themselves (in the discovery document) and the words of
// their refusals before any challenge is issued.
let service: TestService;
let api: Api;
beforeAll(async () => {
  service = await startTestService();
  api = new Api(service.baseUrl);
});
afterAll(() => service?.stop());

describe("route prices", () => {
  it("lists a number's price for each number type, from the rate card", async () => {
    const { body: doc } = await api.get("/.well-known/agent-payments.json");
    const buy = doc.routes.find((r: any) => r.path === "/v1/x402/numbers/buy");
    expect(buy.prices).toEqual({ local: "1.150000", toll_free: "2.150000", mobile: "1.500000" });
  });

  it("refuses a top-up outside the bounds, naming them, before asking for any payment", async () => {
    for (const amount of ["0.49", "500.01"]) {
      const res = await api.post("/v1/billing/topup/x402/pay", undefined, { query: { amount } });
      expect(res.status, amount).toBe(422);
      expect(res.body.detail).toBe("The top-up amount must be between 0.500000 and 500.000000 USD.");
      expect(res.body.errors).toEqual([{ field: "amount", in: "query", message: "must be between 0.500000 and 500.000000 USD" }]);
      expect(res.headers.get("payment-required")).toBeNull();
    }
  });

  it("refuses to renew a number that does not exist, naming it, before asking for any payment", async () => {
    const topup = (await (await x402Fetch(newWallet())(`${service.baseUrl}/v1/billing/topup/x402/pay?amount=1`, { method: "POST" })).json()) as any;
    const res = await new Api(service.baseUrl, topup.agent_token).post("/v1/x402/numbers/renew", { number_id: "num_missing" });
    expect(res.status).toBe(404);
    expect(res.body.detail).toBe('No number with id "num_missing" exists on this account.');
    const unpaid = await api.post("/v1/x402/numbers/renew", { number_id: "num_missing" }, { key: null });
    expect(unpaid.status).toBe(404);
    expect(unpaid.headers.get("payment-required")).toBeNull();
  });
});
