import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Agentline, unwrap, verifyWebhook, WebhookVerificationError } from "@agentline/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { startTestService, type TestService } from "../support/service.js";

// verifyWebhook against deliveries the service really sent: each signature it carries (the
// spec's hex header, GitHub's `sha256=` form, Standard Webhooks) verifies on its own, and none
// verifies a changed body or under another secret.
let service: TestService;
let agentline: Agentline;
let receiver: Server;
let receiverUrl: string;
const received: Array<{ body: Buffer; headers: IncomingHttpHeaders }> = [];

beforeAll(async () => {
  service = await startTestService({ env: { ALLOW_PRIVATE_WEBHOOKS: "1" } });
  const account = await createAccount(service.core);
  agentline = new Agentline({ baseUrl: service.baseUrl, apiKey: account.apiKey });
  receiver = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({ body: Buffer.concat(chunks), headers: req.headers });
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  await new Promise((resolve) => receiver?.close(resolve));
  await service?.stop();
});

/** One real delivery (the webhook test event) to a new agent's webhook set up with `options`. */
async function delivery(options: { secret: string; signature_header?: string }) {
  const agent = unwrap(await agentline.api.POST("/v1/agents", { body: { name: "Signed" } }));
  unwrap(await agentline.api.POST("/v1/webhooks", { body: { agent_id: agent.agent_id, url: receiverUrl, ...options } }));
  const before = received.length;
  expect(unwrap(await agentline.api.POST("/v1/webhooks/test", { params: { query: { agent_id: agent.agent_id } } }))).toMatchObject({ delivered: true });
  expect(received.length).toBe(before + 1);
  return received.at(-1)!;
}

const STANDARD = ["webhook-id", "webhook-timestamp", "webhook-signature"];
const without = (headers: IncomingHttpHeaders, names: string[]) => Object.fromEntries(Object.entries(headers).filter(([name]) => !names.includes(name)));

describe("verifyWebhook on real deliveries", () => {
  it("accepts the spec's X-Webhook-Signature (hex) alone, and Standard Webhooks alone", async () => {
    const secret = "a-plain-secret-of-enough-length-0001";
    const { body, headers } = await delivery({ secret });
    expect(headers["x-webhook-signature"]).toMatch(/^[0-9a-f]{64}$/);

    const specOnly = without(headers, STANDARD);
    expect(await verifyWebhook(body, specOnly, secret)).toMatchObject({ event_type: "webhook.test", event_id: expect.stringMatching(/^evt_/) });
    const standardOnly = without(headers, ["x-webhook-signature"]);
    expect(await verifyWebhook(body, standardOnly, secret)).toMatchObject({ event_type: "webhook.test" });
    // A fetch-style Headers object and a string body work the same.
    expect(await verifyWebhook(body.toString("utf8"), new Headers(specOnly as Record<string, string>), secret)).toMatchObject({ event_type: "webhook.test" });

    const changed = Buffer.from(body.toString("utf8").replace("webhook.test", "webhook.tesT"));
    await expect(verifyWebhook(changed, specOnly, secret)).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(verifyWebhook(changed, standardOnly, secret)).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(verifyWebhook(body, specOnly, `${secret}x`)).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(verifyWebhook(body, standardOnly, `${secret}x`)).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(verifyWebhook(body, without(headers, [...STANDARD, "x-webhook-signature"]), secret)).rejects.toThrow(/no signature/);
  });

  it("accepts GitHub's sha256= form under X-Hub-Signature-256, and a whsec_ secret for Standard Webhooks", async () => {
    const secret = `whsec_${Buffer.from("thirty-two bytes of webhook key!").toString("base64")}`;
    const { body, headers } = await delivery({ secret, signature_header: "X-Hub-Signature-256" });
    expect(headers["x-hub-signature-256"]).toMatch(/^sha256=[0-9a-f]{64}$/);

    expect(await verifyWebhook(body, without(headers, STANDARD), secret)).toMatchObject({ event_type: "webhook.test" });
    expect(await verifyWebhook(body, without(headers, ["x-hub-signature-256"]), secret)).toMatchObject({ event_type: "webhook.test" });
    // The Standard Webhooks timestamp is checked: the same delivery an hour later is a replay.
    const later = new Date(Date.now() + 3_600_000);
    await expect(verifyWebhook(body, without(headers, ["x-hub-signature-256"]), secret, { now: later })).rejects.toThrow(/too old/);
    await expect(verifyWebhook(Buffer.concat([body, Buffer.from(" ")]), without(headers, STANDARD), secret)).rejects.toBeInstanceOf(WebhookVerificationError);
  });
});
