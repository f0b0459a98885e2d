import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRoutes } from "../gateway/routes/all-routes.js";
import { createAccount, type TestAccount } from "../harness/accounts.js";
import { Api, type ApiResponse } from "../harness/api.js";
import { startTestService, type TestService } from "./support/service.js";

let service: TestService;
let account: TestAccount;
let api: Api;
let agentId: string;
let pathIds: Record<string, string>;

beforeAll(async () => {
  service = await startTestService({ env: { TURN_TIMEOUT_MS: "60000" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
  agentId = (await api.post("/v1/agents", { name: "target" })).body.agent_id;
  const number = (await api.post("/v1/numbers", { agent_id: agentId })).body;
  const call = (await api.post("/v1/calls", { agent_id: agentId, to_number: "+14155550142" })).body;
  await api.post(`/v1/sandbox/calls/${call.call_id}/say`, { text: "hello" });
  pathIds = { agent_id: agentId, number_id: number.number_id, call_id: call.call_id, key_id: "key_00000000000000000000000000" };
});
afterAll(() => service?.stop());

function expectProblem(res: ApiResponse, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code, request_id: expect.any(String), type: expect.stringContaining(`/problems/${code}`) });
}

describe("malformed requests", () => {
  it("answers 400 to malformed JSON", async () => {
    for (const raw of ["{", '{"name": }', "{'name': 'x'}", "nul"]) {
      expectProblem(await api.request("POST", "/v1/agents", { raw }), 400, "malformed_json");
    }
    expectProblem(await api.request("POST", "/v1/auth/otp", { raw: "{", key: null }), 400, "malformed_json");
  });

  it("answers 413 to a body over 1 MiB and accepts one just under", async () => {
    // A JSON body of exactly `bytes` bytes.
    const pad = (bytes: number) => JSON.stringify({ name: "big", description: "x".repeat(bytes - JSON.stringify({ name: "big", description: "" }).length) });
    expect(pad(1000)).toHaveLength(1000);
    expectProblem(await api.request("POST", "/v1/agents", { raw: pad(1024 * 1024 + 1) }), 413, "payload_too_large");
    // Under the limit the body is parsed, and the long description is a 422, not a 413.
    expectProblem(await api.request("POST", "/v1/agents", { raw: pad(1024 * 1024 - 10) }), 422, "validation_error");
  });

  it("answers 415 to a body that is not JSON", async () => {
    expectProblem(await api.request("POST", "/v1/agents", { raw: "name=x", contentType: "application/x-www-form-urlencoded" }), 415, "unsupported_media_type");
    expectProblem(await api.request("POST", "/v1/agents", { raw: "name", contentType: "text/plain" }), 415, "unsupported_media_type");
  });

  it("answers 422 naming the body when it is not an object", async () => {
    for (const raw of ["[]", "[1,2]", '"text"', "42", "null", "true"]) {
      const res = await api.request("POST", "/v1/agents", { raw });
      expect(res.status, raw).toBeGreaterThanOrEqual(400);
      expect(res.status, raw).toBeLessThan(500);
    }
    const missing = await api.request("POST", "/v1/agents");
    expectProblem(missing, 422, "validation_error");
    expect(missing.body.errors).toEqual([{ field: "body", in: "body", message: "is required: send a JSON object" }]);
  });

  it("answers 422 to text the database cannot store, wherever it is", async () => {
    const nul = await api.post("/v1/agents", { name: "a\u0000b" });
    expectProblem(nul, 422, "validation_error");
    expect(nul.body.errors).toEqual([{ field: "name", in: "body", message: expect.stringContaining("NUL") }]);
    const surrogate = await api.post("/v1/agents", { name: "ok", metadata: { note: "\ud800" } });
    expect(surrogate.body.errors[0].field).toBe("metadata.note");
    expectProblem(await api.get("/v1/agents/%00"), 404, "not_found");
    expectProblem(await api.get("/v1/agents", { query: { limit: "\u0000" } }), 422, "validation_error");
    // A valid surrogate pair (an emoji) is fine.
    expect((await api.post("/v1/agents", { name: "call me 📞" })).status).toBe(201);
  });

  it("answers 404 for an unknown path, and 405 naming the methods a known path takes", async () => {
    expectProblem(await api.get("/v1/nothing-here"), 404, "not_found");
    const wrongMethod = await api.request("PUT", "/v1/agents");
    expectProblem(wrongMethod, 405, "method_not_allowed");
    expect(wrongMethod.headers.get("allow")).toBe("GET, POST, HEAD");
    const onItem = await api.request("PUT", "/v1/calls/call_123/hangup");
    expectProblem(onItem, 405, "method_not_allowed");
    expect(onItem.headers.get("allow")).toBe("POST");
  });
});

// Property: whatever a client sends to these routes, the answer is never a 5xx. Strings are drawn
// from all of UTF-16, lone surrogates and NUL included: the database cannot store those.
const unit = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom("\u0000", "\ud800", "\udfff") },
  { weight: 12, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
);
const anyString = fc.string({ unit });
const anyValue = fc.jsonValue({ maxDepth: 3, stringUnit: unit });
const agentish = fc.record({ name: anyValue, description: anyValue, owner_number: anyValue, voice_id: anyValue, metadata: anyValue }, { requiredKeys: [] });
const authish = fc.record(
  { email: fc.oneof(fc.emailAddress(), anyValue), otp: fc.oneof(fc.stringMatching(/^\d{6}$/), anyValue), name: anyValue },
  { requiredKeys: [] },
);
const body = fc.oneof(anyValue, agentish, authish, fc.dictionary(fc.string(), anyValue));
const rawBody = fc.oneof(
  anyString,
  anyString.map((s) => `{"name":${s}}`),
  body.map((b) => JSON.stringify(b)),
);
const queryValue = fc.oneof(anyString, fc.integer().map(String), fc.double().map(String));

describe("never a 5xx (property)", () => {
  // Every route that takes a body or changes something, with this account's real ids in its path.
  const routes = () =>
    allRoutes({ carrier: "sandbox" })
      .filter((r) => r.method === "post" || r.method === "patch")
      .map((r) => [r.method.toUpperCase(), r.path.replace(/\{(\w+)\}/g, (_, name: string) => pathIds[name] ?? "x")] as const);
  const queryFor = fc.dictionary(fc.constantFrom("agent_id", "turn_id", "phone_number", "limit", "status", "x"), queryValue, { maxKeys: 3 });

  it("covers every POST and PATCH route", () => expect(routes().length).toBeGreaterThanOrEqual(20));

  it("for any JSON body and query on every POST and PATCH route", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes()), body, queryFor, async ([method, path], value, query) => {
        const res = await api.request(method, path, { body: value, query });
        expect(res.status).toBeLessThan(500);
        if (res.status >= 400) expect(res.body.code).toEqual(expect.any(String));
      }),
      { numRuns: 400 },
    );
  });

  it("for any JSON body on the agent and auth routes", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes()), body, async ([method, path], value) => {
        const res = await api.request(method, path, { body: value });
        expect(res.status).toBeLessThan(500);
        if (res.status >= 400) expect(res.body.code).toEqual(expect.any(String));
      }),
      { numRuns: 250 },
    );
  });

  it("for any raw body text", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes()), rawBody, async ([method, path], raw) => {
        const res = await api.request(method, path, { raw });
        expect(res.status).toBeLessThan(500);
      }),
      { numRuns: 150 },
    );
  });

  it("for any query and path values on the read routes", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.constantFrom("limit", "offset", "x"), queryValue),
        fc.string({ minLength: 1, unit: "binary" }).filter((s) => s !== "." && s !== ".."),
        async (query, id) => {
          const list = await api.get("/v1/agents", { query });
          expect(list.status).toBeLessThan(500);
          const keys = await api.get("/v1/auth/keys", { query });
          expect(keys.status).toBeLessThan(500);
          const one = await api.get(`/v1/agents/${encodeURIComponent(id)}`);
          expect(one.status).toBe(404);
          const del = await api.delete(`/v1/auth/keys/${encodeURIComponent(id)}`);
          expect(del.status).toBeLessThan(500);
        },
      ),
      { numRuns: 100 },
    );
  });
});
