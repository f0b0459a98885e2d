import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
let alice: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService();
  alice = await createAccount(service.core);
  api = new Api(service.baseUrl, alice.apiKey);
});
afterAll(() => service?.stop());

describe("agents", () => {
  it("creates an agent with every field and reads it back", async () => {
    const created = await api.post("/v1/agents", {
      name: "Front desk",
      description: "Answers the main line",
      owner_number: "+14155550100",
      voice_id: "joanna",
      metadata: { crm_id: "c_1", tier: 2 },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: "Front desk",
      description: "Answers the main line",
      owner_number: "+14155550100",
      voice_id: "joanna",
      metadata: { crm_id: "c_1", tier: 2 },
    });
    expect(created.body.agent_id).toMatch(/^agt_[0-9a-z]{26}$/);
    const fetched = await api.get(`/v1/agents/${created.body.agent_id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(created.body);
  });

  it("defaults the optional fields", async () => {
    const created = await api.post("/v1/agents", { name: "Bare" });
    expect(created.body).toMatchObject({ description: null, owner_number: null, voice_id: null, metadata: {} });
  });

  it("changes only the fields a PATCH sends, and null clears", async () => {
    const { body: agent } = await api.post("/v1/agents", { name: "A", description: "d", owner_number: "+14155550101", metadata: { k: 1 } });
    const renamed = await api.patch(`/v1/agents/${agent.agent_id}`, { name: "B" });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: "B", description: "d", owner_number: "+14155550101", metadata: { k: 1 } });
    expect(Date.parse(renamed.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(agent.updated_at));
    const cleared = await api.patch(`/v1/agents/${agent.agent_id}`, { description: null, owner_number: null });
    expect(cleared.body).toMatchObject({ name: "B", description: null, owner_number: null, metadata: { k: 1 } });
    const unchanged = await api.patch(`/v1/agents/${agent.agent_id}`, {});
    expect(unchanged.body).toEqual(cleared.body);
  });

  it("sets and clears an agent's voice with a catalogue id", async () => {
    const { body: agent } = await api.post("/v1/agents", { name: "Voiced", voice_id: "lea" });
    expect(agent.voice_id).toBe("lea");
    const changed = await api.patch(`/v1/agents/${agent.agent_id}`, { voice_id: "daniel" });
    expect(changed.status).toBe(200);
    expect(changed.body.voice_id).toBe("daniel");
    const cleared = await api.patch(`/v1/agents/${agent.agent_id}`, { voice_id: null });
    expect(cleared.body.voice_id).toBeNull();
  });

  it("answers 422 naming voice_id for a voice that is not in the catalogue, and keeps the old voice", async () => {
    const created = await api.post("/v1/agents", { name: "Unknown voice", voice_id: "alloy" });
    expect(created.status).toBe(422);
    expect(created.body.errors).toEqual([{ field: "voice_id", in: "body", message: expect.stringContaining('"joanna"') }]);
    const { body: agent } = await api.post("/v1/agents", { name: "Keeps voice", voice_id: "amy" });
    const patched = await api.patch(`/v1/agents/${agent.agent_id}`, { voice_id: "Joanna" });
    expect(patched.status).toBe(422);
    expect(patched.body.errors.map((e: any) => e.field)).toEqual(["voice_id"]);
    expect((await api.get(`/v1/agents/${agent.agent_id}`)).body.voice_id).toBe("amy");
  });

  it("refuses to clear the name", async () => {
    const { body: agent } = await api.post("/v1/agents", { name: "Keep" });
    const res = await api.patch(`/v1/agents/${agent.agent_id}`, { name: null });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ field: "name", in: "body", message: expect.any(String) }]);
  });

  it("deletes an agent, after which it is gone", async () => {
    const { body: agent } = await api.post("/v1/agents", { name: "Temp" });
    const deleted = await api.delete(`/v1/agents/${agent.agent_id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ agent_id: agent.agent_id, deleted: true, released_numbers: [], unassigned_numbers: [] });
    expect((await api.get(`/v1/agents/${agent.agent_id}`)).status).toBe(404);
    expect((await api.delete(`/v1/agents/${agent.agent_id}`)).status).toBe(404);
  });

  it("pages the list newest first with limit, offset and has_more", async () => {
    const bob = await createAccount(service.core);
    const bobApi = api.withKey(bob.apiKey);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await bobApi.post("/v1/agents", { name: `agent ${i}` })).body.agent_id);
    const first = await bobApi.get("/v1/agents", { query: { limit: 2 } });
    expect(first.body).toMatchObject({ limit: 2, offset: 0, has_more: true });
    expect(first.body.data.map((a: any) => a.agent_id)).toEqual([ids[4], ids[3]]);
    const last = await bobApi.get("/v1/agents", { query: { limit: 2, offset: 4 } });
    expect(last.body).toMatchObject({ limit: 2, offset: 4, has_more: false });
    expect(last.body.data.map((a: any) => a.agent_id)).toEqual([ids[0]]);
    const all = await bobApi.get("/v1/agents");
    expect(all.body).toMatchObject({ limit: 20, offset: 0, has_more: false });
    expect(all.body.data).toHaveLength(5);
  });

  it.each([
    [{ limit: 0 }, "limit"],
    [{ limit: 101 }, "limit"],
    [{ limit: "ten" }, "limit"],
    [{ offset: -1 }, "offset"],
    [{ limit: 2.5 }, "limit"],
  ])("answers 422 for list query %j", async (query, field) => {
    const res = await api.get("/v1/agents", { query });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("validation_error");
    expect(res.body.errors.map((e: any) => e.field)).toEqual([field]);
  });

  it("names every offending field in one 422", async () => {
    const res = await api.post("/v1/agents", { description: 5, owner_number: "555-0100", voice_id: "", metadata: [], colour: "red" });
    expect(res.status).toBe(422);
    const fields = res.body.errors.map((e: any) => e.field).sort();
    expect(fields).toEqual(["colour", "description", "metadata", "name", "owner_number", "voice_id"]);
    expect(res.body.errors.find((e: any) => e.field === "name").message).toBe("is required");
    expect(res.body.errors.find((e: any) => e.field === "colour").message).toBe("is not a recognised field");
  });

  it("limits metadata to 50 keys and 8 KiB", async () => {
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
    expect((await api.post("/v1/agents", { name: "m", metadata: many })).status).toBe(422);
    expect((await api.post("/v1/agents", { name: "m", metadata: { big: "x".repeat(9000) } })).status).toBe(422);
  });
});
