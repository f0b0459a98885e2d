import { describe, expect, it } from "vitest";
import { newId } from "../../core/ids.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { ledgerOf } from "./seed.js";
import { serviceForFile } from "./support.js";

// What reports.test.ts does not reach: a call's ledger rows that carry no item (the ledger allows
// it; every row the service writes today has one) must not be reported as outbound or inbound.
const NOW = "2030-03-13T15:00:00.000Z";

const service = serviceForFile();

describe("per-call spend", () => {
  it("gives a call whose rows name no item no direction, and counts it as a call of neither kind", async () => {
    service().core.now = () => new Date(NOW);
    const account = await createAccount(service().core, undefined, { creditMicros: 0 });
    const api = new Api(service().baseUrl, account.apiKey);
    const ledger = ledgerOf(service().core, account.accountId);
    const plain = newId("call");
    const outbound = newId("call");
    await ledger.credit("topup", 1_000_000, "2030-03-02T00:00:00Z");
    await ledger.charge({ category: "call", callId: outbound, item: "call.outbound", quantity: 60 }, 15_000, "2030-03-03T00:00:00Z");
    await ledger.charge({ category: "call", callId: plain, quantity: 10 }, 2_500, "2030-03-04T00:00:00Z");

    const { body } = await api.get("/v1/billing/expenditure/calls");
    expect(body.data.map((c: any) => [c.call_id, c.direction, c.spend, c.billed_seconds])).toEqual([
      [plain, null, "0.002500", 10],
      [outbound, "outbound", "0.015000", 60],
    ]);
    expect((await api.get("/v1/usage")).body.calls).toEqual({ count: 2, inbound: 0, outbound: 1, billed_seconds: 70, billed_minutes: 1.17 });
  });
});
