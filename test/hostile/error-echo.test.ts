import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { type Bystander, bystander } from "../support/bystander.js";
import { httpMcp } from "../support/mcp.js";
import { startTestService, type TestService } from "../support/service.js";

// What an error repeats of a request is capped: a field name is cut to 64 characters, at most 20
// fields are listed (errors_omitted counts the rest), so a request of a thousand long unknown
// names is answered in a few kilobytes, not echoed back at its own size.

let service: TestService;
let account: TestAccount;
let api: Api;
let other: Bystander;

beforeAll(async () => {
  service = await startTestService();
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
  other = await bystander(service);
});
afterAll(() => service?.stop());

const longName = (i: number) => `field_${i}_${"x".repeat(800)}`;
const manyLongFields = () => Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [longName(i), 1]));

describe("a 422 for a body of a thousand unknown, 800-character field names", () => {
  it("lists 20 of them, each cut to 64 characters, says how many more, and stays small", async () => {
    const res = await api.post("/v1/agents", { name: "x", ...manyLongFields() });
    expect(res.status).toBe(422);
    expect(res.body.errors).toHaveLength(20);
    expect(res.body.errors_omitted).toBe(980);
    for (const error of res.body.errors) {
      expect(error.field.length).toBeLessThanOrEqual(64);
      expect(error.field).toMatch(/^field_\d+_x+…$/);
      expect(error).toMatchObject({ in: "body", message: "is not a recognised field" });
    }
    expect(res.body.detail).toMatch(/ and 980 more\.$/);
    expect(res.text.length).toBeLessThan(8 * 1024);
    await other.check();
  });

  it("caps unknown query parameters, and text that cannot be stored, alike", async () => {
    const query = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [longName(i).slice(0, 100), "1"]));
    const params = await api.get("/v1/agents", { query });
    expect(params.status).toBe(422);
    expect(params.body.errors).toHaveLength(20);
    expect(params.body.errors_omitted).toBe(80);
    expect(params.body.errors.every((e: { field: string }) => e.field.length <= 64)).toBe(true);
    const nul = await api.post("/v1/agents", { name: "x", metadata: { [`${"k".repeat(39)}`]: { [`${"n".repeat(500)}\u0000`]: 1 } } });
    expect(nul.status).toBe(422);
    expect(nul.body.errors[0].field.length).toBeLessThanOrEqual(64);
    expect(nul.body.detail.length).toBeLessThan(200);
  });

  it("repeats at most 64 characters of a path it cannot find", async () => {
    const id = "agt_" + "z".repeat(4_000);
    const res = await api.get(`/v1/agents/${id}`);
    expect(res.status).toBe(404);
    expect(res.body.detail.length).toBeLessThan(200);
    const route = await api.get(`/v1/${"nothing".repeat(1_000)}`);
    expect(route.status).toBe(404);
    expect(route.body.detail.length).toBeLessThan(200);
  });
});

describe("an MCP tool called with a thousand unknown, 800-character argument names", () => {
  it("answers with 20 of them, cut short, and how many more", async () => {
    const mcp = await httpMcp(service.baseUrl, account.apiKey);
    try {
      const text = await mcp.fails("create_agent", { name: "x", ...manyLongFields() });
      expect(text).toContain("and 980 more");
      expect(text.split("\n").filter((line) => line.startsWith("- "))).toHaveLength(20);
      expect(text.length).toBeLessThan(8 * 1024);
    } finally {
      await mcp.close();
    }
    await other.check();
  });
});
