import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { RelayClient } from "../../harness/relay-client.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";

let service: TestService;
let account: TestAccount;
let api: Api;

beforeAll(async () => {
  service = await startTestService({ env: { RELAY_ACK_TIMEOUT_MS: "60000", ALLOW_PRIVATE_WEBHOOKS: "1" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());

const connect = (agentId: string, target = service, key = account.apiKey, extra: Record<string, string> = {}) =>
  RelayClient.connect(target.baseUrl, { agent_id: agentId, runtime: "test", ...extra }, key);

/** Texts the agent's number n times; each makes one sms.received event. */
async function texts(api: Api, phoneNumber: string, n: number, prefix = "m") {
  for (let i = 0; i < n; i++) await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550150", text: `${prefix}${i}` });
}

describe("the relay WebSocket", () => {
  it("says ready, then sends the events that were waiting, oldest first", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    await texts(api, phoneNumber, 3);
    const relay = await connect(agentId);
    const events = await relay.waitForEvents(3);
    expect(relay.frames[0]).toEqual({ type: "ready", agent_id: agentId, runtime: "test", protocol: "service-relay/1" });
    expect(events.map((e) => e.payload.text)).toEqual(["m0", "m1", "m2"]);
    expect(events[0]).toMatchObject({ event_type: "sms.received", agent_id: agentId, account_id: account.accountId });
    await relay.close();
  });

  it("delivers live, and keeps an unacknowledged event until it is acknowledged", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    let relay = await connect(agentId);
    await texts(api, phoneNumber, 1, "live");
    const [first] = await relay.waitForEvents(1);
    await relay.close();

    relay = await connect(agentId);
    const [again] = await relay.waitForEvents(1);
    expect(again!.event_id).toBe(first!.event_id);
    relay.ack(again!.event_id);
    await new Promise((r) => setTimeout(r, 200));
    await relay.close();

    relay = await connect(agentId);
    await new Promise((r) => setTimeout(r, 300));
    expect(relay.events()).toEqual([]);
    expect((await api.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data).toEqual([]);
    await relay.close();
  });

  it("accepts batched acks", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    await texts(api, phoneNumber, 4);
    let relay = await connect(agentId);
    const events = await relay.waitForEvents(4);
    relay.ack(...events.slice(0, 3).map((e) => e.event_id));
    await new Promise((r) => setTimeout(r, 200));
    await relay.close();
    relay = await connect(agentId);
    const left = await relay.waitForEvents(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(relay.events().map((e) => e.event_id)).toEqual([events[3]!.event_id]);
    expect(left[0]!.payload.text).toBe("m3");
    await relay.close();
  });

  it("replaces an older socket with a newer one (close code 4000)", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    const older = await connect(agentId);
    const newer = await connect(agentId);
    expect((await older.closed).code).toBe(4000);
    await texts(api, phoneNumber, 1);
    await newer.waitForEvents(1);
    await newer.close();
  });

  it("sends an event again when its ack does not come in time", async () => {
    const quick = await startTestService({ env: { RELAY_ACK_TIMEOUT_MS: "300" } });
    try {
      const owner = await createAccount(quick.core);
      const qapi = new Api(quick.baseUrl, owner.apiKey);
      const { agentId, phoneNumber } = await agentWithNumber(qapi);
      const relay = await connect(agentId, quick, owner.apiKey);
      await texts(qapi, phoneNumber, 1);
      const twice = await relay.waitForEvents(2, () => true, 3_000);
      expect(twice[0]!.event_id).toBe(twice[1]!.event_id);
      relay.ack(twice[0]!.event_id);
      await new Promise((r) => setTimeout(r, 800));
      expect(relay.events()).toHaveLength(2);
      await relay.close();
    } finally {
      await quick.stop();
    }
  });

  it("keeps at most RELAY_WINDOW events in flight, and sends more as acks arrive", async () => {
    const small = await startTestService({ env: { RELAY_WINDOW: "3", RELAY_ACK_TIMEOUT_MS: "60000" } });
    try {
      const owner = await createAccount(small.core);
      const sapi = new Api(small.baseUrl, owner.apiKey);
      const { agentId, phoneNumber } = await agentWithNumber(sapi);
      await texts(sapi, phoneNumber, 8);
      const relay = await connect(agentId, small, owner.apiKey);
      await relay.waitForEvents(3);
      await new Promise((r) => setTimeout(r, 300));
      expect(relay.events()).toHaveLength(3);
      relay.ack(...relay.events().map((e) => e.event_id));
      await relay.waitForEvents(6);
      await new Promise((r) => setTimeout(r, 300));
      expect(relay.events().map((e) => e.payload.text)).toEqual(["m0", "m1", "m2", "m3", "m4", "m5"]);
      await relay.close();
    } finally {
      await small.stop();
    }
  });

  it("is preferred over the webhook while it is open", async () => {
    const receiver = await startReceiver();
    try {
      const { agentId, phoneNumber } = await agentWithNumber(api);
      await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url });
      const relay = await connect(agentId);
      await texts(api, phoneNumber, 1, "to-relay");
      await relay.waitForEvents(1);
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.requests).toEqual([]);
      await relay.close();
      await texts(api, phoneNumber, 1, "to-webhook");
      const [delivered] = await receiver.waitFor(1);
      expect(delivered!.body.payload.text).toBe("to-webhook0");
    } finally {
      await receiver.close();
    }
  });

  it("pings, and drops a client that stops answering pings", async () => {
    const pinging = await startTestService({ env: { RELAY_PING_MS: "150" } });
    try {
      const owner = await createAccount(pinging.core);
      const { agentId } = await agentWithNumber(new Api(pinging.baseUrl, owner.apiKey));
      const healthy = await RelayClient.connect(pinging.baseUrl, { agent_id: agentId }, owner.apiKey);
      const pings: number[] = [];
      healthy.ws.on("ping", () => pings.push(Date.now()));
      await new Promise((r) => setTimeout(r, 700));
      expect(pings.length).toBeGreaterThanOrEqual(2);
      expect(healthy.ws.readyState).toBe(healthy.ws.OPEN);
      await healthy.close();
      const silent = await RelayClient.connect(pinging.baseUrl, { agent_id: agentId }, owner.apiKey, { autoPong: false });
      const closed = await Promise.race([silent.closed, new Promise((r) => setTimeout(() => r("still open"), 3_000))]);
      expect(closed).not.toBe("still open");
    } finally {
      await pinging.stop();
    }
  });

  it("answers error frames to bad client frames and stays open", async () => {
    const { agentId } = await agentWithNumber(api);
    const relay = await connect(agentId);
    relay.ws.send("nope");
    relay.ws.send(JSON.stringify({ type: "subscribe" }));
    relay.ws.send(JSON.stringify({ type: "ack", event_ids: [] }));
    await new Promise((r) => setTimeout(r, 200));
    expect(relay.frames.filter((f) => f.type === "error")).toHaveLength(3);
    expect(relay.ws.readyState).toBe(relay.ws.OPEN);
    await relay.close();
  });

  it("refuses no key (401), another account's agent (404), and bad query values (422)", async () => {
    const { agentId } = await agentWithNumber(api);
    await expect(RelayClient.connect(service.baseUrl, { agent_id: agentId }, null)).rejects.toMatchObject({ status: 401 });
    await expect(RelayClient.connect(service.baseUrl, { agent_id: agentId }, "sk_" + "C".repeat(43))).rejects.toMatchObject({ status: 401 });
    const mallory = await createAccount(service.core);
    await expect(RelayClient.connect(service.baseUrl, { agent_id: agentId }, mallory.apiKey)).rejects.toMatchObject({ status: 404 });
    await expect(RelayClient.connect(service.baseUrl, {}, account.apiKey)).rejects.toMatchObject({ status: 422 });
    await expect(RelayClient.connect(service.baseUrl, { agent_id: agentId, runtime: "Bad Runtime!" }, account.apiKey)).rejects.toMatchObject({ status: 422 });
  });
});
