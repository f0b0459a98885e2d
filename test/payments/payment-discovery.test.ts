import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRoutes } from "../../gateway/routes/all-routes.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";

let service: TestService;
let api: Api;
beforeAll(async () => {
  service = await startTestService();
  api = new Api(service.baseUrl);
});
afterAll(() => service?.stop());

// Every route that charges, as the code says, in the "METHOD path" form.
const charging = allRoutes({ carrier: "sandbox" })
  .filter((r) => r.price)
  .map((r) => `${r.method.toUpperCase()} ${r.path}`)
  .sort();

/** The price a route really asks for, read from its 402 answer. */
async function askedPrice(method: string, path: string, body?: unknown, query?: Record<string, string>) {
  const res = await api.request(method, path, { body, query, key: null });
  expect(res.status, `${method} ${path}`).toBe(402);
  const required = JSON.parse(Buffer.from(res.headers.get("payment-required")!, "base64").toString());
  expect(required.accepts[0].amount).toBe(String(Math.round(Number(res.body.price) * 1e6)));
  return res.body.price as string;
}

describe("payment discovery", () => {
  it("agent-payments.json lists exactly the routes that charge, at the prices they charge", async () => {
    const { body: doc } = await api.get("/.well-known/agent-payments.json");
    const listed = doc.routes.flatMap((r: any) => r.method.split("|").map((m: string) => `${m} ${r.path}`)).sort();
    expect(listed).toEqual(charging);
    expect(doc).toMatchObject({ mode: "local", test_money: true, currency: "USD", networks: [{ network: "eip155:84532", chain_id: 84532 }] });
    expect(doc.payee).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(doc.topup).toMatchObject({ min: "0.500000", max: "500.000000", methods: ["GET", "POST"] });

    const sample: Record<string, { body?: unknown; query?: Record<string, string> }> = {
      "POST /v1/x402/numbers/renew": { body: { number_id: "num_x" } },
      "POST /v1/x402/calls": { body: { to_number: "+14155550142" } },
      "POST /v1/x402/webhooks": { body: { url: "https://example.com/hook" } },
      "PATCH /v1/x402/agents": { body: { name: "x" } },
      "POST /v1/x402/numbers/buy": { body: {} },
      "GET /v1/x402/calls/{call_id}/transcript": {},
      "POST /v1/x402/calls/{call_id}/say": { body: { text: "Hello?" } },
      "POST /v1/x402/calls/{call_id}/digits": { body: { digits: "1" } },
      "POST /v1/x402/calls/{call_id}/transfer": { body: { to_number: "+14155557777" } },
    };
    for (const route of doc.routes) {
      for (const method of route.method.split("|")) {
        const key = `${method} ${route.path}`;
        const path = route.path.replace("{call_id}", "call_x");
        if (route.path === "/v1/billing/topup/x402/pay") {
          expect(await askedPrice(method, path, undefined, { amount: "0.5" })).toBe(route.prices.min);
          expect(await askedPrice(method, path, undefined, { amount: "500" })).toBe(route.prices.max);
        } else if (route.path === "/v1/x402/numbers/buy") {
          for (const [type, price] of Object.entries(route.prices)) expect(await askedPrice(method, path, { number_type: type })).toBe(price);
        } else if (route.path === "/v1/x402/messages") {
          expect(route.prices).toEqual({ per_segment: "0.008300" });
          expect(await askedPrice(method, path, { to_number: "+14155550142", text: "hi" })).toBe("0.008300");
          expect(await askedPrice(method, path, { to_number: "+14155550142", text: "ж".repeat(71) })).toBe("0.016600");
        } else if (route.path === "/v1/x402/numbers/renew") {
          expect(route.prices).toMatchObject({ local: "1.150000", toll_free: "2.150000", mobile: "1.500000" });
        } else {
          expect(await askedPrice(method, path, sample[key]?.body, sample[key]?.query), key).toBe(route.price);
        }
      }
    }
  });

  it("/.well-known/x402 lists the same paid resources with their x402 requirements", async () => {
    const { body: doc } = await api.get("/.well-known/x402");
    const { body: payments } = await api.get("/.well-known/agent-payments.json");
    expect(doc.x402Version).toBe(2);
    const http = doc.resources.filter((r: any) => r.type === "http");
    expect(http.map((r: any) => r.resource).sort()).toEqual(payments.routes.map((r: any) => r.url).sort());
    // Beside them, the paid MCP tools of /mcp/x402 (test/mcp-payments/discovery.test.ts).
    expect(doc.resources.filter((r: any) => r.type !== "http").every((r: any) => r.type === "mcp")).toBe(true);
    for (const resource of doc.resources) {
      for (const accepted of resource.accepts)
        expect(accepted).toMatchObject({ scheme: "exact", network: "eip155:84532", payTo: payments.payee, asset: payments.assets[0].address });
    }
  });

  it("marks every paid operation in /openapi.json with x-payment-info, and no other", async () => {
    const { body: openapi } = await api.get("/openapi.json");
    const marked: string[] = [];
    for (const [path, ops] of Object.entries(openapi.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!op["x-payment-info"]) continue;
        marked.push(`${method.toUpperCase()} ${path}`);
        expect(op["x-payment-info"].offers[0]).toMatchObject({ intent: "charge", method: "evm" });
        expect(op.responses["402"]).toBeDefined();
      }
    }
    expect(marked.sort()).toEqual(charging);
  });

  it("names the no-signup sign-in methods in service.json", async () => {
    const { body } = await api.get("/.well-known/service.json");
    expect(body.auth.methods.map((m: any) => m.type)).toEqual(["api_key", "email_otp", "agent_token", "x402", "mpp", "oauth"]);
  });
});
