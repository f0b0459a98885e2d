import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { RelayClient } from "../../harness/relay-client.js";
import { freshDatabase, onPostgres, startTestService, type TestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";

let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService();
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());

/** Opens a relay URL with no Authorization header, as a browser would. */
const open = (url: string) => RelayClient.connectUrl(url);

describe("relay tickets", () => {
  it("opens the relay with no Authorization header and delivers the agent's events", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    const issued = await api.post("/v1/events/ws/ticket", { agent_id: agentId });
    expect(issued.status).toBe(201);
    expect(issued.body).toMatchObject({ ticket: expect.stringMatching(/^rt_/), agent_id: agentId, expires_in: 60 });
    expect(issued.body.url).toBe(`${service.baseUrl.replace(/^http/, "ws")}/v1/events/ws?agent_id=${agentId}&ticket=${issued.body.ticket}`);
    const relay = await open(issued.body.url);
    await relay.next((f) => f.type === "ready");
    await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550150", text: "by ticket" });
    const [event] = await relay.waitForEvents(1);
    expect(event).toMatchObject({ event_type: "sms.received", agent_id: agentId, payload: { text: "by ticket" } });
    await relay.close();
  });

  it("is good once: a second socket with the same ticket is refused with 401", async () => {
    const { agentId } = await agentWithNumber(api);
    const { body } = await api.post("/v1/events/ws/ticket", { agent_id: agentId });
    const first = await open(body.url);
    await expect(open(body.url)).rejects.toMatchObject({ status: 401 });
    await first.close();
  });

  it("refuses an expired ticket, an unknown one, and one issued for another agent", async () => {
    const a = await agentWithNumber(api);
    const b = await agentWithNumber(api);
    const relayUrl = (agentId: string, ticket: string) => `${service.baseUrl.replace(/^http/, "ws")}/v1/events/ws?agent_id=${agentId}&ticket=${ticket}`;
    const forA = await api.post("/v1/events/ws/ticket", { agent_id: a.agentId });
    await expect(open(relayUrl(b.agentId, forA.body.ticket))).rejects.toMatchObject({ status: 401 });
    await expect(open(relayUrl(a.agentId, "rt_nope"))).rejects.toMatchObject({ status: 401 });

    const old = await api.post("/v1/events/ws/ticket", { agent_id: a.agentId });
    const realNow = service.core.now;
    service.core.now = () => new Date(Date.now() + 61_000);
    try {
      await expect(open(old.body.url)).rejects.toMatchObject({ status: 401 });
    } finally {
      service.core.now = realNow;
    }
  });

  it("keeps the Authorization header form working, and a header wins over a ticket", async () => {
    const { agentId } = await agentWithNumber(api);
    const byHeader = await RelayClient.connect(service.baseUrl, { agent_id: agentId }, account.apiKey);
    await byHeader.next((f) => f.type === "ready");
    await byHeader.close();
    const { body } = await api.post("/v1/events/ws/ticket", { agent_id: agentId });
    const both = await RelayClient.connect(service.baseUrl, { agent_id: agentId, ticket: body.ticket }, account.apiKey);
    await both.close();
    // The header was used, so the ticket is still unspent.
    const byTicket = await open(body.url);
    await byTicket.close();
  });

  it("answers 404 for another account's agent and 422 without agent_id, and needs a key", async () => {
    const other = await createAccount(service.core);
    const { agentId } = await agentWithNumber(new Api(service.baseUrl, other.apiKey));
    expect((await api.post("/v1/events/ws/ticket", { agent_id: agentId })).status).toBe(404);
    const missing = await api.post("/v1/events/ws/ticket", {});
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toEqual([expect.objectContaining({ field: "agent_id" })]);
    expect((await api.post("/v1/events/ws/ticket", { agent_id: agentId }, { key: null })).status).toBe(401);
  });
});

describe.runIf(onPostgres)("relay tickets across processes (PostgreSQL)", () => {
  it("is redeemed by a process other than the one that issued it, once", async () => {
    const database = await freshDatabase();
    const a = await startTestService({ databaseUrl: database.url });
    const b = await startTestService({ databaseUrl: database.url });
    try {
      const owner = await createAccount(a.core);
      const { agentId } = await agentWithNumber(new Api(a.baseUrl, owner.apiKey));
      const { body } = await new Api(a.baseUrl, owner.apiKey).post("/v1/events/ws/ticket", { agent_id: agentId });
      const onB = body.url.replace(a.baseUrl.replace(/^http/, "ws"), b.baseUrl.replace(/^http/, "ws"));
      const relay = await open(onB);
      await relay.next((f) => f.type === "ready");
      await expect(open(body.url)).rejects.toMatchObject({ status: 401 });
      await relay.close();
    } finally {
      await a.close();
      await b.close();
      await database.drop();
    }
  });
});
