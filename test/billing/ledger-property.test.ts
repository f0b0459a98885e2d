import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { operatorCredit } from "../../core/billing/operator-credit.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { expectBalanceIsLedgerSum, ledgerOf, manualClock } from "./support.js";

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ env: { BILLING_INTERVAL_MS: "3600000", TURN_TIMEOUT_MS: "60000" } });
});
afterAll(() => service?.stop());

/** Micro-dollars from an API money string ("-0.015000"). */
const micros = (money: string) => Math.round(Number(money) * 1_000_000);

type Step =
  | { kind: "credit"; micros: number }
  | { kind: "buy"; type: "local" | "toll_free" | "mobile" }
  | { kind: "call"; direction: "inbound" | "outbound"; seconds: number }
  | { kind: "text" }
  | { kind: "month" };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("credit" as const), micros: fc.integer({ min: 1, max: 3_000_000 }) }),
  fc.record({ kind: fc.constant("buy" as const), type: fc.constantFrom("local" as const, "toll_free" as const, "mobile" as const) }),
  fc.record({
    kind: fc.constant("call" as const),
    direction: fc.constantFrom("inbound" as const, "outbound" as const),
    seconds: fc.integer({ min: 0, max: 300 }),
  }),
  fc.record({ kind: fc.constant("text" as const) }),
  fc.record({ kind: fc.constant("month" as const) }),
);

/** Every page of a paginated report. */
async function allPages(api: Api, path: string, query: Record<string, string> = {}) {
  const rows: any[] = [];
  for (let offset = 0; ; offset += 100) {
    const { body } = await api.get(path, { query: { ...query, limit: 100, offset } });
    rows.push(...body.data);
    if (!body.has_more) return rows;
  }
}

/** The invariants after every step: balance is the ledger's sum, never negative, and every report adds up to the ledger. */
async function checkReports(api: Api, accountId: string, calls: string[], range: { from: string; to: string }) {
  const balance = await expectBalanceIsLedgerSum(service.core, accountId);
  const rows = await ledgerOf(service.core, accountId);
  const spend = (category: string) => rows.filter((r) => r.category === category).reduce((t, r) => t - r.amountMicros, 0);
  const credits = rows.filter((r) => r.amountMicros > 0 && !["call", "number", "sms"].includes(r.category)).reduce((t, r) => t + r.amountMicros, 0);

  expect(micros((await api.get("/v1/billing/balance")).body.balance)).toBe(balance);
  const expenditure = (await api.get("/v1/billing/expenditure", { query: range })).body;
  expect(micros(expenditure.by_category.calls)).toBe(spend("call"));
  expect(micros(expenditure.by_category.numbers)).toBe(spend("number"));
  expect(micros(expenditure.by_category.sms)).toBe(spend("sms"));
  expect(micros(expenditure.total_spend)).toBe(spend("call") + spend("number") + spend("sms"));
  expect(micros(expenditure.credits.total)).toBe(credits);

  const summary = (await api.get("/v1/billing/summary", { query: { months: 24 } })).body;
  expect(micros(summary.total_spend)).toBe(spend("call") + spend("number") + spend("sms"));
  expect(micros(summary.total_credits)).toBe(credits);

  const transactions = await allPages(api, "/v1/usage/transactions", range);
  expect(transactions).toHaveLength(rows.length);
  expect(transactions.reduce((t, r) => t + micros(r.amount), 0)).toBe(balance);

  const perCall = await allPages(api, "/v1/billing/expenditure/calls", range);
  expect(perCall.reduce((t, r) => t + micros(r.spend), 0)).toBe(spend("call"));
  const perNumber = await allPages(api, "/v1/billing/expenditure/numbers", range);
  expect(perNumber.reduce((t, r) => t + micros(r.spend), 0)).toBe(spend("number"));

  const usage = (await api.get("/v1/usage", { query: range })).body;
  expect(usage.sms.received).toBe(rows.filter((r) => r.category === "sms").length);
  expect(usage.numbers.purchased).toBe(rows.filter((r) => r.item === "number.purchase").length);
  expect(usage.numbers.renewed).toBe(rows.filter((r) => r.item === "number.renewal").length);
  expect(usage.calls.billed_seconds).toBe(rows.filter((r) => r.category === "call").reduce((t, r) => t + r.quantity, 0));

  for (const callId of calls) expect((await api.get(`/v1/billing/verify/${callId}`)).body.agrees, callId).toBe(true);
}

describe("the ledger (property)", () => {
  it("keeps balance = sum of ledger ≥ 0 and every report equal to the ledger, whatever happens", { timeout: 600_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 4_000_000 }), fc.array(step, { minLength: 1, maxLength: 8 }), async (opening, steps) => {
        const clock = manualClock(service.core, new Date("2026-03-01T12:00:00.000Z"));
        const range = { from: "2026-02-01", to: "2027-01-31" };
        const account = await createAccount(service.core, undefined, { creditMicros: opening });
        const api = new Api(service.baseUrl, account.apiKey);
        const agentId = (await api.post("/v1/agents", { name: "prop" })).body.agent_id;
        const calls: string[] = [];
        for (const s of steps) {
          if (s.kind === "credit") {
            await operatorCredit(service.core, { accountId: account.accountId, amountUsd: (s.micros / 1e6).toFixed(6), note: "property" });
          } else if (s.kind === "buy") {
            expect([201, 402]).toContain((await api.post("/v1/numbers", { agent_id: agentId, number_type: s.type })).status);
          } else if (s.kind === "text") {
            const number = (await api.get("/v1/numbers")).body.data[0];
            if (number)
              expect([201, 402]).toContain(
                (await api.post("/v1/sandbox/inbound/sms", { to_number: number.phone_number, from_number: "+14155550171", text: "hi" })).status,
              );
          } else if (s.kind === "month") {
            clock.advance(31 * 86_400_000);
            await service.core.billing.runOnce();
          } else {
            const number = (await api.get("/v1/numbers")).body.data[0];
            const placed =
              s.direction === "outbound"
                ? await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" })
                : number
                  ? await api.post("/v1/sandbox/inbound/calls", { to_number: number.phone_number, from_number: "+14155550133" })
                  : undefined;
            if (placed?.status === 201) {
              const callId = placed.body.call_id;
              calls.push(callId);
              // The call runs for `seconds`, metered as it goes; the balance may end it first.
              for (let t = 0; t < s.seconds; t += 20) {
                clock.advance(Math.min(20, s.seconds - t) * 1000);
                await service.core.billing.runOnce();
              }
              await api.post(`/v1/calls/${callId}/hangup`);
              const ended = (await api.get(`/v1/calls/${callId}`)).body;
              expect(ended.billed_seconds).toBeLessThanOrEqual(s.seconds);
            } else if (placed) {
              expect([400, 402]).toContain(placed.status);
            }
          }
          await checkReports(api, account.accountId, calls, range);
        }
        service.core.now = () => new Date();
      }),
      { numRuns: 30 },
    );
  });
});
