import { createHmac } from "node:crypto";
import { hostname } from "node:os";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { Softphone } from "../support/softphone.js";
import { agentWithNumber, answeredCall } from "../support/telephony.js";

// Local receivers are plain http on loopback, so private targets are allowed here; the guard
// itself is tested with a service that does not allow them.
let service: TestService;
let account: TestAccount;
let api: Api;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  service = await startTestService({
    env: {
      ALLOW_PRIVATE_WEBHOOKS: "1",
      WEBHOOK_RETRY_SCHEDULE: "20ms,40ms,60ms",
      WEBHOOK_LIVE_RETRY_SCHEDULE: "10ms,20ms",
      WEBHOOK_TIMEOUT_MS: "500",
      TURN_TIMEOUT_MS: "60000",
    },
  });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
});
afterAll(() => service?.stop());
beforeEach(async () => {
  receiver = await startReceiver();
});
afterEach(() => receiver?.close());

const sms = (phoneNumber: string, text: string) => api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550160", text });

describe("configuring webhooks", () => {
  it("creates with a generated whsec_ secret shown once, masks it afterwards, and replaces on a second POST", async () => {
    const { agentId } = await agentWithNumber(api);
    const created = await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      agent_id: agentId,
      url: receiver.url,
      signature_header: "X-Webhook-Signature",
      protocol: "service-relay/1",
      capabilities: [],
    });
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    const listed = await api.get("/v1/webhooks", { query: { agent_id: agentId } });
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0].secret).toBe(`whsec_…${created.body.secret.slice(-4)}`);
    expect(listed.text).not.toContain(created.body.secret);

    const replaced = await api.post("/v1/webhooks", {
      agent_id: agentId,
      url: receiver.url + "?v=2",
      secret: "my-own-secret-of-some-length",
      signature_header: "X-Hub-Signature-256",
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({
      webhook_id: created.body.webhook_id,
      secret: "my-own-secret-of-some-length",
      signature_header: "X-Hub-Signature-256",
    });
    expect((await api.get("/v1/webhooks", { query: { agent_id: agentId } })).body.data).toHaveLength(1);
  });

  it.each([
    [{ url: "ftp://example.com/hook" }, "url"],
    [{ url: "not a url" }, "url"],
    [{ url: "https://user:pass@example.com/hook" }, "url"],
    [{ signature_header: "Bad Header" }, "signature_header"],
    [{ signature_header: "Content-Type" }, "signature_header"],
    [{ protocol: "service-relay/9" }, "protocol"],
    [{ capabilities: ["briefing"] }, "capabilities"],
    [{ protocol: "service-relay/2", capabilities: ["telepathy"] }, "capabilities.0"],
    [{ protocol: "service-relay/2", capabilities: ["briefing", "briefing"] }, "capabilities"],
    [{ secret: "short" }, "secret"],
  ])("answers 422 naming the field for %j", async (change, field) => {
    const { agentId } = await agentWithNumber(api);
    const res = await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, ...change });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: any) => e.field)).toEqual([field]);
  });

  it("deletes, after which test and delete are 404 and events go back to the mailbox", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url });
    await sms(phoneNumber, "while hooked");
    await receiver.waitFor(1);
    expect((await api.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data).toEqual([]);
    expect((await api.delete("/v1/webhooks", { query: { agent_id: agentId } })).body).toEqual({ agent_id: agentId, deleted: true });
    expect((await api.delete("/v1/webhooks", { query: { agent_id: agentId } })).status).toBe(404);
    expect((await api.post("/v1/webhooks/test", undefined, { query: { agent_id: agentId } })).status).toBe(404);
    await sms(phoneNumber, "after delete");
    const mailbox = await api.get("/v1/events", { query: { agent_id: agentId } });
    expect(mailbox.body.data.map((e: any) => e.payload.text)).toEqual(["after delete"]);
    expect(receiver.requests).toHaveLength(1);
  });

  it("answers 404 for another account's agent everywhere", async () => {
    const { agentId } = await agentWithNumber(api);
    await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url });
    const mallory = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
    expect((await mallory.post("/v1/webhooks", { agent_id: agentId, url: receiver.url })).status).toBe(404);
    expect((await mallory.get("/v1/webhooks", { query: { agent_id: agentId } })).status).toBe(404);
    expect((await mallory.delete("/v1/webhooks", { query: { agent_id: agentId } })).status).toBe(404);
    expect((await mallory.post("/v1/webhooks/test", undefined, { query: { agent_id: agentId } })).status).toBe(404);
    expect((await mallory.get("/v1/webhooks/deliveries", { query: { agent_id: agentId } })).status).toBe(404);
    expect((await mallory.get("/v1/webhooks")).body.data).toEqual([]);
  });
});

describe("deliveries", () => {
  it("signs the raw body with the secret (hex HMAC) and with Standard Webhooks, and names the event", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    const { body: hook } = await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url });
    await sms(phoneNumber, "signed");
    const [req] = await receiver.waitFor(1);
    const expected = createHmac("sha256", hook.secret).update(req!.raw).digest("hex");
    expect(req!.headers["x-webhook-signature"]).toBe(expected);
    expect(req!.headers["x-service-event"]).toBe("sms.received");
    expect(req!.headers["x-service-event-id"]).toBe(req!.body.event_id);
    expect(req!.headers["x-service-delivery-attempt"]).toBe("1");
    expect(req!.headers["content-type"]).toBe("application/json");
    expect(req!.body).toMatchObject({ event_type: "sms.received", agent_id: agentId, payload: { text: "signed" } });
    const verified = new StandardWebhook(hook.secret).verify(req!.raw, req!.headers as Record<string, string>);
    expect(verified).toEqual(req!.body);
    // A body changed in transit fails both checks.
    const tampered = req!.raw.replace("signed", "forged");
    expect(createHmac("sha256", hook.secret).update(tampered).digest("hex")).not.toBe(expected);
    expect(() => new StandardWebhook(hook.secret).verify(tampered, req!.headers as Record<string, string>)).toThrow();
  });

  it("uses X-Hub-Signature-256 when asked, and a custom secret verifies with Standard Webhooks' raw format", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    const secret = "a-custom-secret-0123456789";
    await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, secret, signature_header: "X-Hub-Signature-256" });
    await sms(phoneNumber, "github style");
    const [req] = await receiver.waitFor(1);
    expect(req!.headers["x-hub-signature-256"]).toBe(`sha256=${createHmac("sha256", secret).update(req!.raw).digest("hex")}`);
    expect(req!.headers["x-webhook-signature"]).toBeUndefined();
    expect(new StandardWebhook(secret, { format: "raw" }).verify(req!.raw, req!.headers as Record<string, string>)).toEqual(req!.body);
  });

  it("retries a failing receiver with the same event_id, and delivers the event once", async () => {
    receiver.answerWith((n) => (n < 2 ? 500 : 204));
    const { agentId, phoneNumber } = await agentWithNumber(api);
    await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url });
    await sms(phoneNumber, "third time lucky");
    const tries = await receiver.waitFor(3);
    expect(new Set(tries.map((r) => r.body.event_id)).size).toBe(1);
    expect(tries.map((r) => r.headers["x-service-delivery-attempt"])).toEqual(["1", "2", "3"]);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.requests).toHaveLength(3);
    const attempts = await api.get("/v1/webhooks/deliveries", { query: { agent_id: agentId } });
    expect(attempts.body.data.map((a: any) => [a.attempt, a.status_code, a.outcome])).toEqual([
      [3, 204, "succeeded"],
      [2, 500, "failed"],
      [1, 500, "failed"],
    ]);
    expect(attempts.body.data[1]).toMatchObject({ error: "HTTP 500", message_type: "sms.received", url: receiver.url });
    expect((await api.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data).toEqual([]);
  });

  it("returns the event to the mailbox when the receiver never succeeds", async () => {
    receiver.answerWith(() => 503);
    const { agentId, phoneNumber } = await agentWithNumber(api);
    await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url });
    await sms(phoneNumber, "lost?");
    await receiver.waitFor(4);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.requests).toHaveLength(4);
    const mailbox = await api.get("/v1/events", { query: { agent_id: agentId } });
    expect(mailbox.body.data.map((e: any) => e.payload.text)).toEqual(["lost?"]);
  });

  it("records a timeout as a failed attempt", async () => {
    receiver.answerWith((n) => (n === 0 ? "hang" : 200));
    const { agentId, phoneNumber } = await agentWithNumber(api);
    await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url });
    await sms(phoneNumber, "slow");
    await receiver.waitFor(2);
    await new Promise((r) => setTimeout(r, 200));
    const attempts = (await api.get("/v1/webhooks/deliveries", { query: { agent_id: agentId } })).body.data;
    expect(attempts.at(-1)).toMatchObject({ attempt: 1, status_code: null, error: "timed out after 500 ms" });
    expect(attempts.at(-1).latency_ms).toBeGreaterThanOrEqual(450);
    expect(attempts[0]).toMatchObject({ attempt: 2, status_code: 200 });
  });

  it("delivers an agent's events in the order they happened", async () => {
    const { agentId, phoneNumber } = await agentWithNumber(api);
    await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url });
    for (let i = 0; i < 8; i++) await sms(phoneNumber, `n${i}`);
    const got = await receiver.waitFor(8);
    expect(got.map((r) => r.body.payload.text)).toEqual(["n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"]);
  });

  it("gives up a live turn after a few fast retries: the push is refused and the event waits in the mailbox", async () => {
    receiver.answerWith(() => 500);
    const { agentId } = await agentWithNumber(api);
    await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url });
    const callId = await answeredCall(api, agentId);
    const phone = await Softphone.connect(service.baseUrl, callId, account.apiKey);
    const turnId = await phone.say("anyone there?");
    await receiver.waitFor(3, (r) => r.headers["x-service-event"] === "call.utterance");
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.requests.filter((r) => r.headers["x-service-event"] === "call.utterance")).toHaveLength(3);
    const late = await api.post(`/v1/calls/${callId}/context`, { text: "sorry" }, { query: { turn_id: turnId } });
    expect(late.status).toBe(409);
    expect(late.body.code).toBe("turn_abandoned");
    const mailbox = await api.get("/v1/events", { query: { agent_id: agentId, event_type: "call.utterance" } });
    expect(mailbox.body.data.map((e: any) => e.turn_id)).toEqual([turnId]);
  });

  it("sends webhook.test through the pipeline and reports the first attempt", async () => {
    const { agentId } = await agentWithNumber(api);
    await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url });
    const ok = await api.post("/v1/webhooks/test", undefined, { query: { agent_id: agentId } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ delivered: true, status_code: 200, error: null });
    const [req] = await receiver.waitFor(1);
    expect(req!.body).toMatchObject({ event_id: ok.body.event_id, event_type: "webhook.test" });
    expect(req!.headers["x-service-event"]).toBe("webhook.test");
    receiver.answerWith(() => 418);
    const failing = await api.post("/v1/webhooks/test", undefined, { query: { agent_id: agentId } });
    expect(failing.body).toMatchObject({ delivered: false, status_code: 418, error: "HTTP 418" });
  });
});

describe("the SSRF guard (ALLOW_PRIVATE_WEBHOOKS off)", () => {
  it("refuses private targets when configured and again, by resolved address, when delivering", async () => {
    const strict = await startTestService({ env: { WEBHOOK_RETRY_SCHEDULE: "10ms", WEBHOOK_TIMEOUT_MS: "1000" } });
    try {
      const owner = await createAccount(strict.core);
      const sapi = new Api(strict.baseUrl, owner.apiKey);
      const { agentId, phoneNumber } = await agentWithNumber(sapi);
      for (const url of [
        "http://example.com/hook",
        "https://127.0.0.1/hook",
        "https://localhost/hook",
        "https://[::1]/hook",
        "https://169.254.169.254/latest",
        "https://10.1.2.3/x",
        "https://[::ffff:127.0.0.1]/x",
      ]) {
        const res = await sapi.post("/v1/webhooks", { agent_id: agentId, url });
        expect(res.status, url).toBe(422);
        expect(res.body.errors[0].field).toBe("url");
      }
      // A name is accepted, but it resolves to loopback here: every delivery attempt is refused.
      const named = `https://${hostname()}:${receiver.port}/hook`;
      expect((await sapi.post("/v1/webhooks", { agent_id: agentId, url: named })).status).toBe(201);
      await sapi.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550160", text: "x" });
      // An attempt is listed from the moment it starts; wait for the first one's outcome.
      let finished: any[] = [];
      for (let i = 0; i < 50 && finished.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        const attempts = (await sapi.get("/v1/webhooks/deliveries", { query: { agent_id: agentId } })).body.data;
        finished = attempts.filter((a: any) => a.error !== "in flight: no answer yet");
      }
      expect(finished.length).toBeGreaterThanOrEqual(1);
      expect(finished[0].error).toMatch(/resolves only to private addresses/);
      expect(receiver.requests).toEqual([]);
    } finally {
      await strict.stop();
    }
  });
});
