import { afterAll, beforeAll, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";
import { expectBalanceIsLedgerSum, manualClock } from "./support.js";

// Talk is billed per started second: a call that lasted a fraction of a second is one second,
// 1.2 s is two. Rounding to the nearest second would make short calls free.
let service: TestService;
beforeAll(async () => {
  service = await startTestService({ env: { BILLING_INTERVAL_MS: "3600000", TURN_TIMEOUT_MS: "60000" } });
});
afterAll(() => service?.stop());

it.each([
  [1, 1],
  [400, 1],
  [999, 1],
  [1_000, 1],
  [1_200, 2],
  [59_001, 60],
])("bills a call answered for %i ms as %i s", async (ms, seconds) => {
  const clock = manualClock(service.core);
  try {
    const account = await createAccount(service.core, undefined, { creditMicros: 5_000_000 });
    const api = new Api(service.baseUrl, account.apiKey);
    const { agentId } = await agentWithNumber(api);
    const call = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" })).body;
    clock.set(new Date(Date.parse(call.answered_at) + ms));
    const ended = (await api.post(`/v1/calls/${call.call_id}/hangup`)).body;
    // Outbound talk costs 250 µ$ a second on the default rate card.
    expect(ended).toMatchObject({ status: "completed", duration_seconds: seconds, billed_seconds: seconds, charge: (seconds * 0.00025).toFixed(6) });
    expect((await api.get(`/v1/billing/verify/${call.call_id}`)).body).toMatchObject({ agrees: true, billed_seconds: seconds });
    await expectBalanceIsLedgerSum(service.core, account.accountId);
  } finally {
    service.core.now = () => new Date();
  }
});
