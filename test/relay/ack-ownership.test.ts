import { afterAll, beforeAll, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { RelayClient } from "../../harness/relay-client.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";

// An ack is a write: it marks events delivered. It must only ever reach the socket's own agent's
// events, or one account could make another's events vanish from its mailbox.
let service: TestService;
beforeAll(async () => {
  service = await startTestService({ env: { RELAY_ACK_TIMEOUT_MS: "60000" } });
});
afterAll(() => service?.stop());

it("ignores an ack naming another agent's event, even another account's, and keeps that event pending", async () => {
  const mine = await createAccount(service.core);
  const theirs = await createAccount(service.core);
  const myApi = new Api(service.baseUrl, mine.apiKey);
  const theirApi = new Api(service.baseUrl, theirs.apiKey);
  const me = await agentWithNumber(myApi);
  const sibling = await agentWithNumber(myApi);
  const them = await agentWithNumber(theirApi);
  const text = (api: Api, to: string, body: string) => api.post("/v1/sandbox/inbound/sms", { to_number: to, from_number: "+14155550150", text: body });
  await text(theirApi, them.phoneNumber, "theirs");
  await text(myApi, sibling.phoneNumber, "my sibling's");
  const [theirEvent] = (await theirApi.get("/v1/events/peek", { query: { agent_id: them.agentId } })).body.data;
  const [siblingEvent] = (await myApi.get("/v1/events/peek", { query: { agent_id: sibling.agentId } })).body.data;

  const relay = await RelayClient.connect(service.baseUrl, { agent_id: me.agentId, runtime: "test" }, mine.apiKey);
  relay.ack(theirEvent.event_id, siblingEvent.event_id);
  // A real event of its own, acknowledged after the foreign ids, shows the acks were processed.
  await text(myApi, me.phoneNumber, "mine");
  const [own] = await relay.waitForEvents(1);
  relay.ack(own!.event_id);
  await expect.poll(async () => (await myApi.get("/v1/events/peek", { query: { agent_id: me.agentId } })).body.data, { timeout: 5_000 }).toEqual([]);
  await relay.close();

  expect((await theirApi.get("/v1/events/peek", { query: { agent_id: them.agentId } })).body.data.map((e: any) => e.event_id)).toEqual([theirEvent.event_id]);
  expect((await myApi.get("/v1/events/peek", { query: { agent_id: sibling.agentId } })).body.data.map((e: any) => e.event_id)).toEqual([siblingEvent.event_id]);
});
