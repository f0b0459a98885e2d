import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { newWallet, x402Fetch } from "../support/wallet.js";

// A wallet with no account places a call that leaves a voicemail and is recorded, through the
// /v1/x402 family with its agent_token: the same options as POST /v1/calls.
let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

async function walletWithNumber() {
  const res = await x402Fetch(newWallet())(`${service.baseUrl}/v1/billing/topup/x402/pay?amount=5`, { method: "POST" });
  const token = ((await res.json()) as { agent_token: string }).agent_token;
  const api = new Api(service.baseUrl, token);
  expect((await api.post("/v1/x402/numbers/buy", { area_code: "415" })).status).toBe(201);
  return api;
}

describe("a wallet's call to a voicemail box", () => {
  it("leaves the message, is recorded, and hears call.answered_by and call.recording.ready", async () => {
    const api = await walletWithNumber();
    const placed = await api.post("/v1/x402/calls", {
      to_number: "+14155550004",
      machine_detection: "leave_message",
      voicemail_message: "Your order is ready for pickup.",
      record: true,
    });
    expect(placed.status).toBe(201);
    const callId = placed.body.call_id;
    await expect
      .poll(async () => (await api.get(`/v1/x402/calls/${callId}/transcript`)).body.map((l: any) => l.text))
      .toContain("Your order is ready for pickup.");
    const seen: string[] = [];
    await expect
      .poll(async () => {
        const batch = await api.get("/v1/x402/events", { query: { limit: "100" } });
        seen.push(...batch.body.data.map((e: any) => `${e.event_type}${e.payload.answered_by ? `:${e.payload.answered_by}` : ""}`));
        return seen;
      })
      .toEqual(expect.arrayContaining(["call.answered_by:machine", "call.recording.ready"]));
  });

  it("refuses leave_message without a voicemail_message: 422 naming it, no call", async () => {
    const api = await walletWithNumber();
    const refused = await api.post("/v1/x402/calls", { to_number: "+14155550004", machine_detection: "leave_message" });
    expect(refused.status).toBe(422);
    expect(refused.body.errors.map((e: any) => e.field)).toEqual(["voicemail_message"]);
  });
});
