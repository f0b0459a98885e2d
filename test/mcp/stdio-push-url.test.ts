import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCommand, databaseForProcess, stdioMcp } from "../support/mcp.js";

let database: Awaited<ReturnType<typeof databaseForProcess>>;
beforeAll(async () => {
  database = await databaseForProcess();
});
afterAll(() => database?.drop());

describe("events seen through the stdio MCP server", () => {
  it("carry no push_context_url, push token or transcript URL (the tools answer), so none leads nowhere", async () => {
    const env = { ...database.env, SIGNUP_CREDIT_USD: "20", TURN_TIMEOUT_MS: "60000" };
    const { api_key } = adminCommand(env, ["api-key", "--email", "stdio-push@example.com"]);
    const mcp = await stdioMcp({ ...env, AGENTLINE_API_KEY: api_key });
    try {
      const agent = await mcp.ok("create_agent", { name: "Local" });
      await mcp.ok("buy_number", { agent_id: agent.agent_id });
      const call = await mcp.ok("place_call", { agent_id: agent.agent_id, to_number: "+14155550142" });
      await mcp.ok("simulate_caller_speech", { call_id: call.call_id, text: "Anyone there?" });
      const { events } = await mcp.ok("wait_for_event", { call_id: call.call_id, event_types: ["call.utterance"], timeout_seconds: 10 });
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ turn_id: expect.stringMatching(/^turn_/) });
      for (const field of ["push_context_url", "push_token", "transcript_url"]) expect(events[0]).not.toHaveProperty(field);
      // The turn is answered with the tool instead.
      expect(await mcp.ok("push_context", { call_id: call.call_id, turn_id: events[0].turn_id, text: "Yes, hello." })).toMatchObject({
        turn_status: "answered",
      });
    } finally {
      await mcp.close();
    }
  }, 60_000);
});
