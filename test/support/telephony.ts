import { expect } from "vitest";
import type { Api } from "../../harness/api.js";

/** An agent with one sandbox number, made through the API. */
export async function agentWithNumber(api: Api, agent: Record<string, unknown> = {}) {
  const created = await api.post("/v1/agents", { name: "Test agent", ...agent });
  expect(created.status).toBe(201);
  const number = await api.post("/v1/numbers", { agent_id: created.body.agent_id });
  expect(number.status).toBe(201);
  return { agentId: created.body.agent_id as string, numberId: number.body.number_id as string, phoneNumber: number.body.phone_number as string };
}

/** An outbound sandbox call that answered at once. */
export async function answeredCall(api: Api, agentId: string, to = "+14155550142") {
  const call = await api.post("/v1/calls", { agent_id: agentId, to_number: to });
  expect(call.status).toBe(201);
  expect(call.body.status).toBe("in-progress");
  return call.body.call_id as string;
}

/** Consumes and returns the agent's pending events (types only, or whole). */
export async function drainEvents(api: Api, agentId: string) {
  const { body } = await api.get("/v1/events", { query: { agent_id: agentId, limit: 100 } });
  return body.data as any[];
}
