import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";

let service: TestService;
let api: Api;

beforeAll(async () => {
  service = await startTestService();
  api = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
});
afterAll(() => service?.stop());

/** An agent with some pending events: three texts and a busy call. */
async function agentWithEvents() {
  const { agentId, phoneNumber } = await agentWithNumber(api);
  for (const text of ["one", "two", "three"]) await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550160", text });
  await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550001" });
  return agentId;
}

describe("the mailbox", () => {
  it("peek shows pending events oldest first and consumes nothing", async () => {
    const agentId = await agentWithEvents();
    const first = await api.get("/v1/events/peek", { query: { agent_id: agentId } });
    expect(first.body.data.map((e: any) => e.event_type)).toEqual(["sms.received", "sms.received", "sms.received", "call.busy"]);
    expect(first.body.data.map((e: any) => e.payload.text).slice(0, 3)).toEqual(["one", "two", "three"]);
    const second = await api.get("/v1/events/peek", { query: { agent_id: agentId } });
    expect(second.body).toEqual(first.body);
  });

  it("poll returns each event once", async () => {
    const agentId = await agentWithEvents();
    const polled = await api.get("/v1/events", { query: { agent_id: agentId } });
    expect(polled.body.data).toHaveLength(4);
    expect((await api.get("/v1/events", { query: { agent_id: agentId } })).body.data).toEqual([]);
    expect((await api.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data).toEqual([]);
  });

  it("poll consumes only what its filters select", async () => {
    const agentId = await agentWithEvents();
    const other = await agentWithEvents();
    const calls = await api.get("/v1/events", { query: { agent_id: agentId, event_type: "call.busy" } });
    expect(calls.body.data.map((e: any) => e.event_type)).toEqual(["call.busy"]);
    expect((await api.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data.map((e: any) => e.event_type)).toEqual([
      "sms.received",
      "sms.received",
      "sms.received",
    ]);
    expect((await api.get("/v1/events/peek", { query: { agent_id: other } })).body.data).toHaveLength(4);
  });

  it("pages with limit and has_more", async () => {
    const agentId = await agentWithEvents();
    const page = await api.get("/v1/events", { query: { agent_id: agentId, limit: 3 } });
    expect(page.body).toMatchObject({ limit: 3, has_more: true });
    expect(page.body.data).toHaveLength(3);
    const rest = await api.get("/v1/events", { query: { agent_id: agentId, limit: 3 } });
    expect(rest.body).toMatchObject({ has_more: false });
    expect(rest.body.data.map((e: any) => e.event_type)).toEqual(["call.busy"]);
  });

  it("never hands the same event to two concurrent polls", async () => {
    const agentId = await agentWithEvents();
    const polls = await Promise.all(Array.from({ length: 6 }, () => api.get("/v1/events", { query: { agent_id: agentId, limit: 1 } })));
    const ids = polls.flatMap((p) => p.body.data.map((e: any) => e.event_id));
    expect(ids).toHaveLength(4);
    expect(new Set(ids).size).toBe(4);
  });

  it("carries the spec's envelope on every event", async () => {
    const agentId = await agentWithEvents();
    for (const event of (await api.get("/v1/events", { query: { agent_id: agentId } })).body.data) {
      expect(Object.keys(event)).toEqual(["event_id", "agent_id", "account_id", "event_type", "created_at", "payload"]);
      expect(event.event_id).toMatch(/^evt_/);
    }
  });

  it("refuses event_type on peek, unknown types, and other accounts' agents", async () => {
    const agentId = await agentWithEvents();
    const peekType = await api.get("/v1/events/peek", { query: { event_type: "sms.received" } });
    expect(peekType.status).toBe(422);
    expect(peekType.body.errors.map((e: any) => e.field)).toEqual(["event_type"]);
    expect((await api.get("/v1/events", { query: { event_type: "call.exploded" } })).status).toBe(422);
    const mallory = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
    expect((await mallory.get("/v1/events", { query: { agent_id: agentId } })).status).toBe(404);
    expect((await mallory.get("/v1/events/peek", { query: { agent_id: agentId } })).status).toBe(404);
    expect((await mallory.get("/v1/events")).body.data).toEqual([]);
    expect((await api.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data).toHaveLength(4);
  });
});
