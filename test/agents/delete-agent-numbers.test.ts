import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerEntries } from "../../core/db/schema/ledger-entries.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { manualClock } from "../billing/support.js";
import { httpMcp } from "../support/mcp.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.stop());

describe("deleting an agent", () => {
  it("releases its purchased numbers with it, says so, and bills them no more; attached numbers stay, unassigned", async () => {
    const clock = manualClock(service.core);
    try {
      const account = await createAccount(service.core);
      const api = new Api(service.baseUrl, account.apiKey);
      const agentId = (await api.post("/v1/agents", { name: "Short-lived" })).body.agent_id;
      const bought = (await api.post("/v1/numbers", { agent_id: agentId })).body;
      const attached = (await api.post("/v1/numbers/attach", undefined, { query: { phone_number: "+14155550178", agent_id: agentId } })).body;

      const deleted = await api.delete(`/v1/agents/${agentId}`);
      expect(deleted.status).toBe(200);
      expect(deleted.body).toEqual({
        agent_id: agentId,
        deleted: true,
        released_numbers: [{ number_id: bought.number_id, phone_number: bought.phone_number }],
        unassigned_numbers: [{ number_id: attached.number_id, phone_number: "+14155550178" }],
      });
      expect((await api.get(`/v1/numbers/${bought.number_id}`)).body).toMatchObject({ status: "released", agent_id: null, renews_at: null });
      expect((await api.get(`/v1/numbers/${attached.number_id}`)).body).toMatchObject({ status: "active", agent_id: null });

      // Months later, the released number has cost nothing more than its first month.
      clock.advance(95 * 86_400_000);
      await service.core.billing.runOnce();
      const charges = await service.core.db.select().from(ledgerEntries).where(eq(ledgerEntries.accountId, account.accountId));
      expect(charges.filter((row) => row.numberId === bought.number_id).map((row) => row.item)).toEqual(["number.purchase"]);
    } finally {
      service.core.now = () => new Date();
    }
  });

  it("tells an MCP client, in the tool's description and its result, that the numbers are released", async () => {
    const account = await createAccount(service.core);
    const mcp = await httpMcp(service.baseUrl, account.apiKey);
    try {
      const { tools } = await mcp.client.listTools();
      expect(tools.find((t) => t.name === "delete_agent")!.description).toMatch(/releases its purchased numbers with it/);
      const agent = await mcp.ok("create_agent", { name: "Via MCP" });
      const number = await mcp.ok("buy_number", { agent_id: agent.agent_id });
      const deleted = await mcp.ok("delete_agent", { agent_id: agent.agent_id });
      expect(deleted.released_numbers).toEqual([{ number_id: number.number_id, phone_number: number.phone_number }]);
    } finally {
      await mcp.close();
    }
  });
});
