import { eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { events } from "../../core/db/schema/events.js";
import { ackRelayEvents, relayBacklog } from "../../core/relay/relay.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { RelayClient } from "../../harness/relay-client.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";

// What a relay socket reads (relayBacklog) and what its acks write (ackRelayEvents), called with
// the running service's core on events made through the API.
let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService({ env: { RELAY_ACK_TIMEOUT_MS: "60000", ALLOW_PRIVATE_WEBHOOKS: "1" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());

/** Texts the agent's number once per text, oldest first; each makes one sms.received event. */
async function texts(phoneNumber: string, ...bodies: string[]) {
  for (const text of bodies) await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550150", text });
}

/** An agent with no relay and no webhook: its events wait in the mailbox, pending. */
async function agentWithPending(...bodies: string[]) {
  const agent = await agentWithNumber(api);
  await texts(agent.phoneNumber, ...bodies);
  const pending = await relayBacklog(service.core, agent.agentId, [], 100);
  return { ...agent, ids: pending.map((e) => e.event_id) };
}

const rows = (eventIds: string[]) =>
  service.core.db
    .select({ eventId: events.eventId, status: events.status, deliveredVia: events.deliveredVia })
    .from(events)
    .where(inArray(events.eventId, eventIds));

describe("the relay backlog", () => {
  it("with nothing in flight, is every pending event of the agent, oldest first", async () => {
    const { agentId } = await agentWithPending("a", "b", "c");
    const backlog = await relayBacklog(service.core, agentId, [], 100);
    expect(backlog.map((e) => e.payload.text)).toEqual(["a", "b", "c"]);
  });

  it("leaves out the events the socket already has in flight", async () => {
    const { agentId, ids } = await agentWithPending("a", "b", "c");
    const backlog = await relayBacklog(service.core, agentId, [ids[0]!, ids[2]!], 100);
    expect(backlog.map((e) => e.event_id)).toEqual([ids[1]]);
  });

  it("leaves out an event a webhook is holding, though it is still pending", async () => {
    const receiver = await startReceiver(() => "hang");
    try {
      const { agentId, phoneNumber } = await agentWithNumber(api);
      await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url });
      await texts(phoneNumber, "for the webhook");
      const [request] = await receiver.waitFor(1, (r) => r.body?.payload?.text === "for the webhook");
      const [row] = await service.core.db.select({ status: events.status, route: events.route }).from(events).where(eq(events.eventId, request!.body.event_id));
      expect(row).toEqual({ status: "pending", route: "webhook" });
      expect(await relayBacklog(service.core, agentId, [], 100)).toEqual([]);
    } finally {
      await receiver.close();
    }
  });
});

describe("relay acks", () => {
  it("mark the acknowledged event delivered, via the relay", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    const relay = await RelayClient.connect(service.baseUrl, { agent_id: agentId, runtime: "test" }, account.apiKey);
    await texts(phoneNumber, "ack me");
    const [event] = await relay.waitForEvents(1);
    relay.ack(event!.event_id);
    await expect.poll(() => rows([event!.event_id]), { timeout: 5_000 }).toEqual([{ eventId: event!.event_id, status: "delivered", deliveredVia: "relay" }]);
    await relay.close();
  });

  it("of no ids resolve at once and change nothing", async () => {
    const { agentId, ids } = await agentWithPending("a");
    await expect(ackRelayEvents(service.core, agentId, [])).resolves.toBeUndefined();
    expect(await rows(ids)).toEqual([{ eventId: ids[0], status: "pending", deliveredVia: null }]);
  });

  it("arriving in the same tick are written together: one batch, one promise", async () => {
    const { agentId, ids } = await agentWithPending("a", "b");
    const first = ackRelayEvents(service.core, agentId, [ids[0]!]);
    const second = ackRelayEvents(service.core, agentId, [ids[1]!]);
    expect(second).toBe(first);
    await first;
    expect((await rows(ids)).map((r) => r.status)).toEqual(["delivered", "delivered"]);
  });

  it("count only for the agent that sent them, though written in one batch with the other agent's", async () => {
    const mine = await agentWithPending("mine");
    const theirs = await agentWithPending("theirs");
    // My socket acks its own event and, wrongly, theirs; their socket acks nothing.
    await ackRelayEvents(service.core, mine.agentId, [mine.ids[0]!, theirs.ids[0]!]);
    expect(await rows(mine.ids)).toEqual([{ eventId: mine.ids[0], status: "delivered", deliveredVia: "relay" }]);
    expect(await rows(theirs.ids)).toEqual([{ eventId: theirs.ids[0], status: "pending", deliveredVia: null }]);
  });
});
