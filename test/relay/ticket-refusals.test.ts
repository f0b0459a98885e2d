import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";

// What a client holding a relay URL with a bad ticket is told: the refused upgrade's status and
// its problem body, whose detail says what to do.
let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService();
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());

/** Opens the URL with no Authorization header, expecting a refusal: its status and JSON body. */
function refusal(url: string): Promise<{ status: number; body: any }> {
  const ws = new WebSocket(url);
  return new Promise((resolve, reject) => {
    ws.once("open", () => {
      ws.close();
      reject(new Error("the upgrade was accepted"));
    });
    ws.once("unexpected-response", (_req, res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) }));
    });
    ws.once("error", reject);
  });
}

/** Opens the URL with no Authorization header and expects the relay's ready frame. */
async function expectOpens(url: string): Promise<void> {
  const ws = new WebSocket(url);
  const first = await new Promise<any>((resolve, reject) => {
    ws.once("message", (data) => resolve(JSON.parse(String(data))));
    ws.once("unexpected-response", (_req, res) => reject(new Error(`the upgrade was refused: ${res.statusCode}`)));
    ws.once("error", reject);
  });
  ws.close();
  expect(first).toMatchObject({ type: "ready" });
}

const wsBase = () => service.baseUrl.replace(/^http/, "ws");
const ticketFor = async (agentId: string) => (await api.post("/v1/events/ws/ticket", { agent_id: agentId })).body.ticket as string;

describe("relay ticket refusals", () => {
  it("an unknown ticket: 401, saying where a new one comes from", async () => {
    const { agentId } = await agentWithNumber(api);
    const { status, body } = await refusal(`${wsBase()}/v1/events/ws?agent_id=${agentId}&ticket=rt_nope`);
    expect(status).toBe(401);
    expect(body).toMatchObject({ code: "unauthorized" });
    expect(body.detail).toMatch(/unknown, expired or already used.*POST \/v1\/events\/ws\/ticket/);
  });

  it("a ticket presented for another agent: 401, naming the agent it was issued for", async () => {
    const a = await agentWithNumber(api);
    const b = await agentWithNumber(api);
    const ticket = await ticketFor(a.agentId);
    const { status, body } = await refusal(`${wsBase()}/v1/events/ws?agent_id=${b.agentId}&ticket=${ticket}`);
    expect(status).toBe(401);
    expect(body.detail).toBe(`The relay ticket was issued for agent ${a.agentId}, not ${b.agentId}.`);
  });

  it("a good ticket on a URL without agent_id: 422, agent_id is required (not a ticket refusal), and the ticket stays good", async () => {
    const { agentId } = await agentWithNumber(api);
    const ticket = await ticketFor(agentId);
    const { status, body } = await refusal(`${wsBase()}/v1/events/ws?ticket=${ticket}`);
    expect(status).toBe(422);
    expect(body).toMatchObject({ code: "validation_error" });
    expect(body.detail).toMatch(/^agent_id is required/);
    await expectOpens(`${wsBase()}/v1/events/ws?agent_id=${agentId}&ticket=${ticket}`);
  });

  it("a good ticket on a URL with a bad runtime: 422, and the ticket stays good", async () => {
    const { agentId } = await agentWithNumber(api);
    const ticket = await ticketFor(agentId);
    const { status, body } = await refusal(`${wsBase()}/v1/events/ws?agent_id=${agentId}&runtime=Not%20Valid&ticket=${ticket}`);
    expect(status).toBe(422);
    expect(body.detail).toBe("runtime must match [a-z0-9_-]{1,32}.");
    await expectOpens(`${wsBase()}/v1/events/ws?agent_id=${agentId}&ticket=${ticket}`);
  });
});
