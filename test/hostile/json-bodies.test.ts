import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_CONTAINERS, MAX_JSON_DEPTH } from "../../core/schemas/json-limits.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api, type ApiResponse } from "../../harness/api.js";
import { type Bystander, bystander } from "../support/bystander.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithTwilioNumber, startTwilioService, type TwilioTestService } from "../support/twilio/service.js";

// Deep and wide JSON on every body parser: nesting that overflowed the stack of the body's walk (a
// 500, with no sign-in), and bodies whose many arrays and objects cost far more to build than
// their size. Each is refused, before it is built, with a 400 naming the limit; speed figures
// for the same bodies are in bench/json-bodies.ts.

let service: TestService;
let account: TestAccount;
let api: Api;
let other: Bystander;
let agentId: string;

beforeAll(async () => {
  service = await startTestService({ env: { TOPUP_MIN_USD: "0.01" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
  other = await bystander(service);
  agentId = (await api.post("/v1/agents", { name: "target" })).body.agent_id;
});
afterAll(() => service?.stop());

const MiB = 1024 * 1024;
/** `n` arrays nested in one another: 2n bytes. */
const deepArrays = (n: number) => "[".repeat(n) + "]".repeat(n);
/** `n` objects nested in one another, `{"a":{"a":...1}}`. */
const deepObjects = (n: number) => '{"a":'.repeat(n) + "1" + "}".repeat(n);

function expectOverLimits(res: ApiResponse, limit: "deeper than 64 levels" | "more than 10,000 arrays and objects") {
  expect(res.status, res.text.slice(0, 300)).toBe(400);
  expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ code: "malformed_json", max_depth: MAX_JSON_DEPTH, max_containers: MAX_JSON_CONTAINERS });
  expect(res.body.detail).toContain(limit);
}

describe("JSON nested thousands deep", () => {
  const routes: Array<[string, string, string, Record<string, string>, string | null]> = [];
  beforeAll(() => {
    const mcpHeaders = { accept: "application/json, text/event-stream" };
    routes.push(
      ["a signed-in REST route", "POST", "/v1/agents", {}, account.apiKey],
      ["a REST route's PATCH", "PATCH", `/v1/agents/${agentId}`, {}, account.apiKey],
      ["the sign-in route, with no key", "POST", "/v1/auth/otp", {}, null],
      ["a paid route, before any payment", "POST", "/v1/x402/numbers/buy", {}, null],
      ["the MCP endpoint", "POST", "/mcp", mcpHeaders, account.apiKey],
    );
  });

  it("is a 400 naming the limit, in 8 KB, on every kind of route that takes a body", async () => {
    const bodies = [
      `{"name":"x","metadata":{"k":${deepArrays(3_900)}}}`,
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_agents","arguments":${deepObjects(1_300)}}}`,
      deepArrays(4_000),
    ];
    for (const raw of bodies) expect(raw.length).toBeLessThanOrEqual(8 * 1024);
    for (const [label, method, path, headers, key] of routes) {
      for (const raw of bodies) {
        const res = await api.request(method, path, { raw, headers, key, unchecked: path === "/mcp" });
        expect(res.status, `${label}: ${res.text.slice(0, 200)}`).toBe(400);
        expectOverLimits(res, "deeper than 64 levels");
      }
    }
    await other.check();
  });

  it("keeps the service up and another tenant served while four clients send such bodies", async () => {
    const raw = deepArrays(4_000);
    const attacks = Array.from({ length: 4 }, async () => {
      for (let i = 0; i < 25; i++) expect((await api.request("POST", "/v1/agents", { raw })).status).toBe(400);
    });
    const during = other.sample(10);
    await Promise.all([...attacks, during]);
    await other.check();
  });

  it("reads JSON nested 64 deep, and refuses 65", async () => {
    // The body is one level, metadata another: 62 more objects make 64.
    const body = (levels: number) => `{"name":"deep enough","metadata":{"k":${deepObjects(levels)}}}`;
    const at = await api.request("POST", "/v1/agents", { raw: body(62) });
    expect(at.status, at.text).toBe(201);
    expectOverLimits(await api.request("POST", "/v1/agents", { raw: body(63) }), "deeper than 64 levels");
    // Brackets inside strings are text, not nesting.
    const text = await api.post("/v1/agents", { name: "brackets", description: "[".repeat(500), metadata: { note: "{".repeat(900) } });
    expect(text.status).toBe(201);
  });

  it("is refused on MCP as a problem, before the transport; a tool call within the limit is answered", async () => {
    const call = (args: string) =>
      api.request("POST", "/mcp", {
        raw: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_agent","arguments":{"name":"via mcp","metadata":{"k":${args}}}}}`,
        headers: { accept: "application/json, text/event-stream" },
        unchecked: true,
      });
    // The message, params, arguments and metadata are four levels: 60 more make 64.
    const within = await call(deepObjects(60));
    expect(within.status).toBe(200);
    expect(within.body.result.isError).toBeFalsy();
    expectOverLimits(await call(deepObjects(61)), "deeper than 64 levels");
  });
});

describe("JSON of many arrays and objects", () => {
  /** `[[...]]` nested `depth` deep, repeated to about `bytes`. */
  const nestedArrays = (depth: number, bytes: number) => {
    const one = deepArrays(depth);
    return Array.from({ length: Math.floor(bytes / (one.length + 1)) }, () => one).join(",");
  };

  it("is refused before it is built: 1 MiB of arrays nested just over the limit, or within it but too many", async () => {
    const justOver = await api.request("POST", "/v1/agents", { raw: `{"name":"x","metadata":{"k":[${nestedArrays(62, MiB - 64)}]}}` });
    expectOverLimits(justOver, "deeper than 64 levels");
    const many = await api.request("POST", "/v1/agents", { raw: `{"name":"x","metadata":{"k":[${nestedArrays(61, MiB - 64)}]}}` });
    expectOverLimits(many, "more than 10,000 arrays and objects");
    const empty = await api.request("POST", "/v1/auth/otp", { raw: `[${Array(MAX_JSON_CONTAINERS).fill("[]").join(",")}]`, key: null });
    expectOverLimits(empty, "more than 10,000 arrays and objects");
    // As many as the limit allows are read (and this body is refused for its shape, a 422).
    const allowed = await api.request("POST", "/v1/auth/otp", {
      raw: `[${Array(MAX_JSON_CONTAINERS - 1)
        .fill("[]")
        .join(",")}]`,
      key: null,
    });
    expect(allowed.status).toBe(422);
    await other.check();
  });

  it("answers a body of half a million leaves, the service still up", async () => {
    const numbers = await api.request("POST", "/v1/agents", {
      raw: `{"name":"x","metadata":{"k":[${Array(MiB / 2 - 32)
        .fill("1")
        .join(",")}]}}`,
    });
    expect(numbers.status).toBe(422);
    expect(numbers.body.errors).toEqual([{ field: "metadata", in: "body", message: "may be at most 8192 bytes of JSON" }]);
    await other.check();
  });
});

describe("a JSON body in a charset other than UTF-8", () => {
  it("is a 415: JSON is UTF-8, and the limits are read from its bytes", async () => {
    const utf16 = Buffer.from('{"name":"utf-16"}', "utf16le");
    const res = await api.request("POST", "/v1/agents", { raw: utf16, contentType: "application/json; charset=utf-16le" });
    expect(res.status).toBe(415);
    expect(res.body.code).toBe("unsupported_media_type");
    expect((await api.request("POST", "/v1/agents", { raw: '{"name":"utf-8"}', contentType: "application/json; charset=UTF-8" })).status).toBe(201);
  });
});

describe("payment headers carrying deep JSON", () => {
  const topup = () => `${service.baseUrl}/v1/billing/topup/x402/pay?amount=1`;
  const b64 = (text: string) => Buffer.from(text).toString("base64");

  it("are refused as payments (402 with both challenges again), naming the limit, never as our failure", async () => {
    const deep = `{"x402Version":2,"payload":${deepObjects(1_500)}}`;
    const headers: Array<[string, Record<string, string>, RegExp]> = [
      ["PAYMENT-SIGNATURE", { "payment-signature": b64(deep) }, /PAYMENT-SIGNATURE nests JSON deeper than 64 levels/],
      [
        "Authorization: Payment",
        { authorization: `Payment ${Buffer.from(deep).toString("base64url")}` },
        /Payment credential nests JSON deeper than 64 levels/,
      ],
      ["X-PAYMENT", { "x-payment": b64(deepArrays(5_000)) }, /X-PAYMENT is not base64 JSON/],
    ];
    for (const [name, sent, reason] of headers) {
      const res = await fetch(topup(), { method: "POST", headers: sent });
      const body = (await res.json()) as { code: string; detail: string };
      expect(res.status, name).toBe(402);
      expect(body.code, name).toBe("payment_required");
      expect(body.detail, name).toMatch(reason);
      expect(body.detail, name).not.toMatch(/internal/i);
      expect(res.headers.get("payment-required"), name).toBeTruthy();
      expect(res.headers.get("www-authenticate"), name).toMatch(/^Payment /);
    }
    await other.check();
  });
});

describe("the carrier's webhooks (Twilio's form posts)", () => {
  let twilio: TwilioTestService;
  beforeAll(async () => {
    twilio = await startTwilioService();
  });
  afterAll(() => twilio?.stop());

  it("read form fields flat: names bracketed 5,000 deep, a thousand and one fields, or a JSON body are never a 5xx", async () => {
    const { baseUrl } = twilio.service;
    const twilioApi = new Api(baseUrl, (await createAccount(twilio.service.core)).apiKey);
    await agentWithTwilioNumber(twilioApi);
    const url = `${baseUrl}/twilio/status`;
    const bracketed = await twilio.twilio.post(url, { ["CallSid" + "[a]".repeat(5_000)]: "1" });
    expect(bracketed.status).toBeLessThan(500);
    const fields = Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`f${i}`, "1"]));
    const tooMany = await twilio.twilio.post(url, fields);
    expect(tooMany.status).toBeGreaterThanOrEqual(400);
    expect(tooMany.status).toBeLessThan(500);
    const json = await fetch(`${baseUrl}/twilio/voice`, { method: "POST", headers: { "content-type": "application/json" }, body: deepArrays(4_000) });
    expect(json.status).toBeGreaterThanOrEqual(400);
    expect(json.status).toBeLessThan(500);
    const health = await fetch(`${baseUrl}/health`);
    expect(health.status).toBe(200);
    await other.check();
  });
});
