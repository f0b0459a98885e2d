import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../support/accounts.js";
import { Api } from "../support/api.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";
import { percentile, recordFigure, sleep } from "./figures.js";

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** An agent with a number and a webhook to `url`, in the account `api` signs in to. */
async function agentWithWebhook(api: Api, url: string) {
  const agent = await agentWithNumber(api);
  expect((await api.post("/v1/webhooks", { agent_id: agent.agentId, url })).status).toBe(201);
  return agent;
}

async function text(api: Api, to: string, body: string): Promise<number> {
  const res = await api.post("/v1/sandbox/inbound/sms", { to_number: to, from_number: "+14155550123", text: body });
  expect(res.status).toBe(201);
  return Date.now();
}

const firstAttempt = (receiver: Receiver, body: string) =>
  receiver.requests.find((r) => r.body?.payload?.text === body && r.headers["x-service-delivery-attempt"] === "1");

// Issue 13, row 5: 40 agents' receivers hang; a healthy tenant's webhooks (its live turns too)
// arrive as fast as ever.
describe("40 hanging receivers beside a healthy one", () => {
  let service: TestService;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    service = await startTestService({ env: { ALLOW_PRIVATE_WEBHOOKS: "1", WEBHOOK_TIMEOUT_MS: "10000", TURN_TIMEOUT_MS: "60000" } });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await service?.stop();
  });

  it("delivers the healthy tenant's webhooks within a second", { timeout: 180_000 }, async () => {
    const hanging = await startReceiver(() => "hang");
    const healthy = await startReceiver(() => 200);
    receivers.push(hanging, healthy);
    // Four tenants with ten agents each, every agent's receiver hanging.
    const stuck: Array<{ api: Api; phoneNumber: string }> = [];
    for (let t = 0; t < 4; t++) {
      const api = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
      for (let a = 0; a < 10; a++) stuck.push({ api, ...(await agentWithWebhook(api, `${hanging.url}?agent=${t}-${a}`)) });
    }
    const tenant = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
    const good = await agentWithWebhook(tenant, healthy.url);

    // Three events for each hanging agent, then the healthy tenant's traffic while they hang.
    for (let round = 0; round < 3; round++) await Promise.all(stuck.map((s, i) => text(s.api, s.phoneNumber, `stuck ${i}.${round}`)));
    await hanging.waitFor(20);
    const sentAt = new Map<string, number>();
    for (let i = 0; i < 10; i++) {
      sentAt.set(`healthy ${i}`, await text(tenant, good.phoneNumber, `healthy ${i}`));
      await sleep(100);
    }
    // A live turn: the caller speaks, the call.utterance webhook must arrive in its own lane.
    const callId = await answeredCall(tenant, good.agentId);
    const phone = await Softphone.connect(service.baseUrl, callId, tenant.key!);
    const saidAt = Date.now();
    await phone.say("Hello, is this the healthy tenant?");
    // Long enough to see how late they are when they are late (the code before issue 13: ~40 s).
    await healthy.waitFor(11, () => true, 90_000);
    const latencies = [...sentAt].map(([body, at]) => firstAttempt(healthy, body)!.at - at);
    const utterance = healthy.requests.find((r) => r.headers["x-service-event"] === "call.utterance")!;
    const utteranceMs = utterance.at - saidAt;
    phone.close();

    recordFigure("receivers.healthy_webhook_p100_ms", Math.max(...latencies), "<= 1000");
    recordFigure("receivers.healthy_webhook_p50_ms", percentile(latencies, 50), "~100 or less");
    recordFigure("receivers.healthy_live_utterance_ms", utteranceMs, "<= 1000");
    recordFigure("receivers.hanging_requests_open", hanging.requests.length, "capped per receiver");
    expect(Math.max(...latencies)).toBeLessThanOrEqual(1_000);
    expect(utteranceMs).toBeLessThanOrEqual(1_000);
  });
});

// Issue 13, row 4: a receiver fails one event (it hangs on it for a while, then recovers); the
// agent's newer events are first attempted when they happen, not after the failing one.
describe("a receiver that fails one event, then recovers", () => {
  let service: TestService;
  let receiver: Receiver;

  beforeAll(async () => {
    service = await startTestService({
      env: { ALLOW_PRIVATE_WEBHOOKS: "1", WEBHOOK_TIMEOUT_MS: "2000", WEBHOOK_RETRY_SCHEDULE: "500ms,500ms,500ms,500ms,500ms,500ms,500ms,500ms" },
    });
  });
  afterAll(async () => {
    await receiver?.close();
    await service?.stop();
  });

  it("never holds the newer events back, and delivers the failing one once the receiver recovers", { timeout: 60_000 }, async () => {
    const started = Date.now();
    const healthyFrom = started + 8_000;
    receiver = await startReceiver((_n, r) => (r.body?.payload?.text === "event 0" && Date.now() < healthyFrom ? "hang" : 200));
    const api = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
    const { phoneNumber } = await agentWithWebhook(api, receiver.url);
    // Event 0's first attempt hangs to its timeout; the newer events happen while it retries.
    const sentAt = [await text(api, phoneNumber, "event 0")];
    await receiver.waitFor(1);
    await sleep(2_200);
    for (let i = 1; i < 5; i++) {
      sentAt.push(await text(api, phoneNumber, `event ${i}`));
      await sleep(900);
    }
    await receiver.waitFor(4, (r) => /^event [1-4]$/.test(r.body?.payload?.text), 30_000);
    const delays = [1, 2, 3, 4].map((i) => firstAttempt(receiver, `event ${i}`)!.at - sentAt[i]!);
    // The failing event is delivered once the receiver is healthy again.
    await receiver.waitFor(1, (r) => r.body?.payload?.text === "event 0" && r.at >= healthyFrom, 30_000);
    const triedBeforeHealthy = [1, 2, 3, 4].filter((i) => firstAttempt(receiver, `event ${i}`)!.at < healthyFrom).length;
    recordFigure("failing_receiver.newer_first_attempt_max_delay_ms", Math.max(...delays), "<= 1000 (not held back)");
    recordFigure("failing_receiver.newer_events_tried_while_failing", `${triedBeforeHealthy} of 4`, "4 of 4");
    expect(Math.max(...delays)).toBeLessThanOrEqual(1_000);
    expect(triedBeforeHealthy).toBe(4);
  });
});
