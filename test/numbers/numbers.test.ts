import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
let api: Api;
let agentId: string;

beforeAll(async () => {
  service = await startTestService();
  api = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
  agentId = (await api.post("/v1/agents", { name: "Numbers" })).body.agent_id;
});
afterAll(() => service?.stop());

describe("buying numbers", () => {
  it("buys a US local number by default, from the fictional 555-01xx range", async () => {
    const res = await api.post("/v1/numbers", { agent_id: agentId });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ agent_id: agentId, country: "US", number_type: "local", status: "active", source: "purchased", released_at: null });
    expect(res.body.number_id).toMatch(/^num_/);
    expect(res.body.phone_number).toMatch(/^\+1[2-9]\d\d55501\d\d$/);
  });

  it.each([
    [{ area_code: "312" }, /^\+131255501\d\d$/, "US", "local"],
    [{ number_type: "toll_free" }, /^\+18\d\d55501\d\d$/, "US", "toll_free"],
    [{ number_type: "toll_free", area_code: "888" }, /^\+188855501\d\d$/, "US", "toll_free"],
    [{ country: "CA", area_code: "604" }, /^\+160455501\d\d$/, "CA", "local"],
    [{ country: "GB" }, /^\+442079460\d{3}$/, "GB", "local"],
    [{ country: "GB", area_code: "161" }, /^\+441614960\d{3}$/, "GB", "local"],
    [{ country: "GB", number_type: "mobile" }, /^\+447700900\d{3}$/, "GB", "mobile"],
  ])("buys %j", async (params, pattern, country, type) => {
    const res = await api.post("/v1/numbers", { agent_id: agentId, ...params });
    expect(res.status).toBe(201);
    expect(res.body.phone_number).toMatch(pattern);
    expect(res.body).toMatchObject({ country, number_type: type });
  });

  it.each([
    [{ country: "FR" }, "country"],
    [{ country: "us" }, "country"],
    [{ area_code: "911" }, "area_code"],
    [{ area_code: "800" }, "area_code"],
    [{ number_type: "toll_free", area_code: "415" }, "area_code"],
    [{ country: "GB", area_code: "999" }, "area_code"],
    [{ number_type: "satellite" }, "number_type"],
    [{ area_code: "41a" }, "area_code"],
  ])("answers 422 naming the field for %j", async (params, field) => {
    const res = await api.post("/v1/numbers", { agent_id: agentId, ...params });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: any) => e.field)).toEqual([field]);
  });

  it("answers 422 without agent_id and 404 for an agent that is not the account's", async () => {
    expect((await api.post("/v1/numbers", {})).body.errors.map((e: any) => e.field)).toEqual(["agent_id"]);
    expect((await api.post("/v1/numbers", { agent_id: "agt_00000000000000000000000000" })).status).toBe(404);
  });

  it("sells each number once, and never again after release (a 100-number block runs dry)", { timeout: 120_000 }, async () => {
    const bought = new Set<string>();
    for (let i = 0; i < 100; i++) {
      const res = await api.post("/v1/numbers", { agent_id: agentId, area_code: "207" });
      expect(res.status).toBe(201);
      bought.add(res.body.phone_number);
    }
    expect(bought.size).toBe(100);
    const dry = await api.post("/v1/numbers", { agent_id: agentId, area_code: "207" });
    expect(dry.status).toBe(409);
    expect(dry.body.code).toBe("no_numbers_available");
    const { body: page } = await api.get("/v1/numbers", { query: { limit: 1 } });
    expect((await api.post(`/v1/numbers/${page.data[0].number_id}/release`)).status).toBe(200);
    expect((await api.post("/v1/numbers", { agent_id: agentId, area_code: "207" })).body.code).toBe("no_numbers_available");
  });
});

describe("managing numbers", () => {
  it("lists active numbers by default, released ones on request, and filters by agent", async () => {
    const other = (await api.post("/v1/agents", { name: "Other" })).body.agent_id;
    const kept = (await api.post("/v1/numbers", { agent_id: other })).body;
    const gone = (await api.post("/v1/numbers", { agent_id: other })).body;
    await api.post(`/v1/numbers/${gone.number_id}/release`);
    const active = await api.get("/v1/numbers", { query: { agent_id: other } });
    expect(active.body.data.map((n: any) => n.number_id)).toEqual([kept.number_id]);
    const released = await api.get("/v1/numbers", { query: { agent_id: other, status: "released" } });
    expect(released.body.data.map((n: any) => n.number_id)).toEqual([gone.number_id]);
    expect((await api.get("/v1/numbers", { query: { status: "sold" } })).status).toBe(422);
    expect((await api.get("/v1/numbers", { query: { agent_id: "agt_00000000000000000000000000" } })).status).toBe(404);
  });

  it("reassigns a number to another agent", async () => {
    const a = (await api.post("/v1/agents", { name: "A" })).body.agent_id;
    const b = (await api.post("/v1/agents", { name: "B" })).body.agent_id;
    const num = (await api.post("/v1/numbers", { agent_id: a })).body;
    const moved = await api.patch(`/v1/numbers/${num.number_id}/reassign`, undefined, { query: { agent_id: b } });
    expect(moved.status).toBe(200);
    expect(moved.body.agent_id).toBe(b);
    expect((await api.get(`/v1/numbers/${num.number_id}`)).body.agent_id).toBe(b);
    expect((await api.patch(`/v1/numbers/${num.number_id}/reassign`)).status).toBe(422);
    expect((await api.patch(`/v1/numbers/${num.number_id}/reassign`, undefined, { query: { agent_id: "agt_00000000000000000000000000" } })).status).toBe(404);
  });

  it("releases permanently: status released, a second release and a reassign are 409", async () => {
    const num = (await api.post("/v1/numbers", { agent_id: agentId })).body;
    const released = await api.post(`/v1/numbers/${num.number_id}/release`);
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ status: "released", released_at: expect.any(String) });
    const again = await api.post(`/v1/numbers/${num.number_id}/release`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("number_released");
    expect((await api.patch(`/v1/numbers/${num.number_id}/reassign`, undefined, { query: { agent_id: agentId } })).body.code).toBe("number_released");
    expect((await api.get(`/v1/numbers/${num.number_id}`)).body.status).toBe("released");
    // A released number cannot come back by attaching it either.
    const reattach = await api.post("/v1/numbers/attach", undefined, { query: { phone_number: num.phone_number, agent_id: agentId } });
    expect(reattach.status).toBe(409);
    expect(reattach.body.code).toBe("number_in_use");
  });

  it("attaches a number bought elsewhere, checking E.164 and that it is not already on the service", async () => {
    const attached = await api.post("/v1/numbers/attach", undefined, { query: { phone_number: "+4915112345678", agent_id: agentId } });
    expect(attached.status).toBe(201);
    expect(attached.body).toMatchObject({ phone_number: "+4915112345678", source: "attached", country: "DE", number_type: "mobile", agent_id: agentId });
    const twice = await api.post("/v1/numbers/attach", undefined, { query: { phone_number: "+4915112345678", agent_id: agentId } });
    expect(twice.body.code).toBe("number_in_use");
    for (const bad of ["4915112345678", "+0123", "+1 415 555 0100", "+1415555010012345"]) {
      const res = await api.post("/v1/numbers/attach", undefined, { query: { phone_number: bad, agent_id: agentId } });
      expect(res.status, bad).toBe(422);
      expect(res.body.errors.map((e: any) => e.field)).toEqual(["phone_number"]);
    }
  });

  it("keeps an agent's attached numbers, unassigned, when the agent is deleted; they can be reassigned", async () => {
    const doomed = (await api.post("/v1/agents", { name: "Doomed" })).body.agent_id;
    const num = (await api.post("/v1/numbers/attach", undefined, { query: { phone_number: "+14155550177", agent_id: doomed } })).body;
    expect((await api.delete(`/v1/agents/${doomed}`)).body.unassigned_numbers).toEqual([{ number_id: num.number_id, phone_number: "+14155550177" }]);
    const orphan = await api.get(`/v1/numbers/${num.number_id}`);
    expect(orphan.body).toMatchObject({ status: "active", agent_id: null });
    const call = await api.post("/v1/sandbox/inbound/calls", { to_number: num.phone_number, from_number: "+14155550150" });
    expect(call.status).toBe(409);
    expect(call.body.code).toBe("number_not_in_service");
    expect(call.body.detail).toMatch(/not in service/);
    await api.patch(`/v1/numbers/${num.number_id}/reassign`, undefined, { query: { agent_id: agentId } });
    expect((await api.post("/v1/sandbox/inbound/calls", { to_number: num.phone_number, from_number: "+14155550150" })).status).toBe(201);
  });
});
