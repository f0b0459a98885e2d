import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accounts } from "../../core/db/schema/accounts.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { expectBalanceIsLedgerSum, ledgerOf } from "../billing/support.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber, drainEvents } from "../support/telephony.js";

let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService();
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());

/** Everything a refused text must leave as it was: the balance, the ledger, the texts, the threads, the events. */
async function snapshot(agentId: string) {
  const balance = (await api.get("/v1/billing/balance")).body.balance;
  const ledger = (await ledgerOf(service.core, account.accountId)).length;
  const messages = (await api.get("/v1/messages", { query: { limit: 100 } })).body.data.length;
  const threads = (await api.get("/v1/messages/conversations", { query: { limit: 100 } })).body.data.length;
  const events = (await api.get("/v1/events/peek", { query: { agent_id: agentId, limit: 100 } })).body.data.length;
  return { balance, ledger, messages, threads, events };
}

async function refusedWithNothingChanged(agentId: string, body: Record<string, unknown>, status: number, check: (problem: any) => void) {
  await drainEvents(api, agentId);
  const before = await snapshot(agentId);
  const refused = await api.post("/v1/messages", body);
  expect(refused.status, JSON.stringify(refused.body)).toBe(status);
  check(refused.body);
  expect(await snapshot(agentId)).toEqual(before);
  await expectBalanceIsLedgerSum(service.core, account.accountId);
}

const fieldOf = (problem: any) => problem.errors.map((e: any) => e.field);

describe("a text refused, with nothing changed", () => {
  it("an empty, blank or over-1,600-character text: 422 naming text", async () => {
    const { agentId } = await agentWithNumber(api);
    for (const text of ["", "   \n ", "x".repeat(1601)]) {
      await refusedWithNothingChanged(agentId, { agent_id: agentId, to_number: "+14155550140", text }, 422, (p) => {
        expect(p.code).toBe("validation_error");
        expect(fieldOf(p)).toEqual(["text"]);
      });
    }
  });

  it("an invalid to_number: 422 naming to_number", async () => {
    const { agentId } = await agentWithNumber(api);
    for (const to of ["4155550140", "+0155", "not a number", ""]) {
      await refusedWithNothingChanged(agentId, { agent_id: agentId, to_number: to, text: "hi" }, 422, (p) => expect(fieldOf(p)).toEqual(["to_number"]));
    }
  });

  it("an agent with no number: 422 naming agent_id, saying to buy one", async () => {
    const created = await api.post("/v1/agents", { name: "No number" });
    await refusedWithNothingChanged(created.body.agent_id, { agent_id: created.body.agent_id, to_number: "+14155550141", text: "hi" }, 422, (p) => {
      expect(fieldOf(p)).toEqual(["agent_id"]);
      expect(p.detail).toContain("POST /v1/numbers");
    });
  });

  it("a from_number that is not one of the agent's: 422 naming from_number", async () => {
    const mine = await agentWithNumber(api);
    const other = await agentWithNumber(api);
    await refusedWithNothingChanged(mine.agentId, { agent_id: mine.agentId, to_number: "+14155550142", text: "hi", from_number: other.phoneNumber }, 422, (p) =>
      expect(fieldOf(p)).toEqual(["from_number"]),
    );
  });

  it("another account's agent: 404, as an unknown one", async () => {
    const stranger = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
    const theirs = await agentWithNumber(stranger);
    const { agentId } = await agentWithNumber(api);
    await refusedWithNothingChanged(agentId, { agent_id: theirs.agentId, to_number: "+14155550143", text: "hi" }, 404, (p) => expect(p.code).toBe("not_found"));
    expect((await stranger.get("/v1/messages")).body.data).toEqual([]);
    await refusedWithNothingChanged(agentId, { agent_id: "agt_unknown", to_number: "+14155550143", text: "hi" }, 404, (p) => expect(p.code).toBe("not_found"));
  });

  it("a balance that cannot cover every segment: 402 before the carrier is asked", async () => {
    const { agentId } = await agentWithNumber(api);
    const saved = (await service.core.db.select({ b: accounts.balanceMicros }).from(accounts).where(eq(accounts.accountId, account.accountId)))[0]!.b;
    // Room for one segment (8,300 micro-USD), not two. Set directly: the ledger check is skipped here.
    await service.core.db.update(accounts).set({ balanceMicros: 10_000 }).where(eq(accounts.accountId, account.accountId));
    try {
      await drainEvents(api, agentId);
      const ledger = (await ledgerOf(service.core, account.accountId)).length;
      const refused = await api.post("/v1/messages", { agent_id: agentId, to_number: "+14155550144", text: "a".repeat(200) });
      expect(refused.status).toBe(402);
      expect(refused.body).toMatchObject({ code: "insufficient_balance", required: "0.016600", balance: "0.010000" });
      expect((await api.get("/v1/billing/balance")).body.balance).toBe("0.010000");
      expect(await ledgerOf(service.core, account.accountId)).toHaveLength(ledger);
      expect((await api.get("/v1/messages", { query: { agent_id: agentId } })).body.data).toEqual([]);
      expect(await drainEvents(api, agentId)).toEqual([]);
      // One segment fits.
      expect((await api.post("/v1/messages", { agent_id: agentId, to_number: "+14155550144", text: "short" })).status).toBe(201);
    } finally {
      await service.core.db.update(accounts).set({ balanceMicros: saved }).where(eq(accounts.accountId, account.accountId));
    }
  });
});
