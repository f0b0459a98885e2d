import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { newWallet, x402Fetch } from "../support/wallet.js";

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ env: { BILLING_INTERVAL_MS: "3600000" } });
});
afterAll(() => service?.stop());

describe("prepaid leases", () => {
  it("release an unrenewed number when its lease ends, and tell the wallet by event; a renewed one stays", async () => {
    const topup = (await (await x402Fetch(newWallet())(`${service.baseUrl}/v1/billing/topup/x402/pay?amount=10`, { method: "POST" })).json()) as any;
    const api = new Api(service.baseUrl, topup.agent_token);
    const kept = (await api.post("/v1/x402/numbers/buy", {})).body.number;
    const lapsed = (await api.post("/v1/x402/numbers/buy", {})).body.number;
    await api.get("/v1/x402/events");
    expect((await api.post("/v1/x402/numbers/renew", { number_id: kept.number_id })).status).toBe(200);

    const realNow = service.core.now;
    try {
      service.core.now = () => new Date(Date.parse(lapsed.expires_at) - 60_000);
      await service.core.billing.runOnce();
      expect((await api.get("/v1/x402/numbers")).body.data).toHaveLength(2);
      service.core.now = () => new Date(Date.parse(lapsed.expires_at) + 1_000);
      await service.core.billing.runOnce();
    } finally {
      service.core.now = realNow;
    }
    const numbers = (await api.get("/v1/x402/numbers")).body.data;
    expect(numbers.map((n: any) => n.number_id)).toEqual([kept.number_id]);
    const events = (await api.get("/v1/x402/events")).body.data;
    expect(events.map((e: any) => [e.event_type, e.payload.number_id, e.payload.reason])).toEqual([["number.released", lapsed.number_id, "lease_expired"]]);
    // A lease is never renewed by itself: the balance was charged only for what was asked.
    expect((await api.get("/v1/x402/numbers")).body.data[0].expires_at).toBe(new Date(Date.parse(kept.expires_at) + 30 * 86_400_000).toISOString());
  });
});
