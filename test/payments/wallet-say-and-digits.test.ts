import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { newWallet, x402Fetch } from "../support/wallet.js";

// Speaking first and keypad digits for a wallet with no account, through the /v1/x402 family
// with its agent_token: a placed call's greeting and from_number, an unprompted line, digits;
// none of them spends the balance (talk time aside), and the refusals are the account routes'.
let service: TestService;
beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000" } });
});
afterAll(() => service?.stop());

async function walletWithNumber() {
  const res = await x402Fetch(newWallet())(`${service.baseUrl}/v1/billing/topup/x402/pay?amount=5`, { method: "POST" });
  const token = ((await res.json()) as { agent_token: string }).agent_token;
  const api = new Api(service.baseUrl, token);
  const bought = await api.post("/v1/x402/numbers/buy", { area_code: "415" });
  expect(bought.status).toBe(201);
  return { api, token, phoneNumber: bought.body.number.phone_number as string };
}

describe("a wallet's call", () => {
  it("places with a greeting from its number, says a line and presses keys, spending nothing for them", async () => {
    const { api, token, phoneNumber } = await walletWithNumber();
    const placed = await api.post("/v1/x402/calls", { to_number: "+14155550142", from_number: phoneNumber, greeting: "Hello, a wallet calling." });
    expect(placed.status).toBe(201);
    expect(placed.body.from_number).toBe(phoneNumber);
    const callId = placed.body.call_id;
    const phone = await Softphone.connect(service.baseUrl, callId, token);
    expect(await phone.next((f) => f.type === "speech")).toMatchObject({ text: "Hello, a wallet calling.", turn_id: null });
    const balance = (await api.get("/v1/billing/balance")).body.balance;
    const said = await api.post(`/v1/x402/calls/${callId}/say`, { text: "Still there?" });
    expect(said.status).toBe(200);
    await phone.next((f) => f.type === "speech" && f.text === "Still there?");
    expect((await api.post(`/v1/x402/calls/${callId}/digits`, { digits: "5#" })).status).toBe(200);
    expect(await phone.next((f) => f.type === "digits")).toEqual({ type: "digits", digits: "5#" });
    expect((await api.get("/v1/billing/balance")).body.balance).toBe(balance);
    expect((await api.get(`/v1/x402/calls/${callId}/transcript`)).body.map((l: any) => l.text)).toEqual(["Hello, a wallet calling.", "Still there?"]);
    await api.post(`/v1/x402/calls/${callId}/hangup`);
  });

  it("refuses a from_number that is not its agent's (422), bad digits (422), and another wallet's call (404)", async () => {
    const mine = await walletWithNumber();
    const theirs = await walletWithNumber();
    const refused = await mine.api.post("/v1/x402/calls", { to_number: "+14155550142", from_number: theirs.phoneNumber });
    expect(refused.status).toBe(422);
    expect(refused.body.errors.map((e: any) => e.field)).toEqual(["from_number"]);
    const call = await theirs.api.post("/v1/x402/calls", { to_number: "+14155550143" });
    expect((await mine.api.post(`/v1/x402/calls/${call.body.call_id}/say`, { text: "Hijacked." })).status).toBe(404);
    expect((await mine.api.post(`/v1/x402/calls/${call.body.call_id}/digits`, { digits: "1" })).status).toBe(404);
    expect((await theirs.api.post(`/v1/x402/calls/${call.body.call_id}/digits`, { digits: "1-2" })).status).toBe(422);
    expect((await theirs.api.get(`/v1/x402/calls/${call.body.call_id}/transcript`)).body).toEqual([]);
    await theirs.api.post(`/v1/x402/calls/${call.body.call_id}/hangup`);
  });
});
