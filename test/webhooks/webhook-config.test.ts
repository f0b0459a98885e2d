import { afterAll, beforeAll, expect, it } from "vitest";
import { getWebhook } from "../../core/webhooks/webhooks.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";

let service: TestService;
let account: TestAccount;
let api: Api;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  service = await startTestService({ env: { ALLOW_PRIVATE_WEBHOOKS: "1", WEBHOOK_RETRY_SCHEDULE: "20ms", WEBHOOK_TIMEOUT_MS: "500" } });
  account = await createAccount(service.core);
  api = new Api(service.baseUrl, account.apiKey);
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await service?.stop();
});

it("states why a url is refused, in the message as well as the field error", async () => {
  const { agentId } = await agentWithNumber(api);
  const refused = await api.post("/v1/webhooks", { agent_id: agentId, url: "ftp://example.com/hook" });
  expect(refused.status).toBe(422);
  expect(refused.body.detail).toBe("The webhook url must be an https:// URL.");
  expect(refused.body.errors).toEqual([{ field: "url", in: "body", message: "must be an https:// URL" }]);
});

it("gives webhooks wh_ ids and pages the account's list", async () => {
  const fresh = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
  for (let i = 0; i < 2; i++) {
    const { agentId } = await agentWithNumber(fresh);
    const created = await fresh.post("/v1/webhooks", { agent_id: agentId, url: receiver.url });
    expect(created.body.webhook_id).toMatch(/^wh_/);
  }
  const first = await fresh.get("/v1/webhooks", { query: { limit: 1 } });
  expect(first.body.data).toHaveLength(1);
  expect(first.body.has_more).toBe(true);
  const all = await fresh.get("/v1/webhooks", { query: { limit: 2 } });
  expect(all.body.data).toHaveLength(2);
  expect(all.body.has_more).toBe(false);
});

it("answers 404 with how to create one when the agent has no webhook to delete or test", async () => {
  const { agentId } = await agentWithNumber(api);
  const message = `Agent ${agentId} has no webhook. Create one with POST /v1/webhooks first.`;
  const deleted = await api.delete("/v1/webhooks", { query: { agent_id: agentId } });
  expect(deleted.status).toBe(404);
  expect(deleted.body.detail).toBe(message);
  const tested = await api.post("/v1/webhooks/test", undefined, { query: { agent_id: agentId } });
  expect(tested.status).toBe(404);
  expect(tested.body.detail).toBe(message);
});

it("sends webhook.test with its message and reports the first attempt; pages the attempts", async () => {
  const { agentId } = await agentWithNumber(api);
  await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url });
  const before = receiver.requests.length;
  const result = await api.post("/v1/webhooks/test", undefined, { query: { agent_id: agentId } });
  expect(result.status).toBe(200);
  expect(result.body).toMatchObject({ delivered: true, status_code: 200, error: null });
  const sent = receiver.requests[before]!;
  expect(sent.body).toMatchObject({
    event_type: "webhook.test",
    event_id: result.body.event_id,
    payload: { message: "This is a test delivery from agentline." },
  });

  await api.post("/v1/webhooks/test", undefined, { query: { agent_id: agentId } });
  const page = await api.get("/v1/webhooks/deliveries", { query: { agent_id: agentId, limit: 1 } });
  expect(page.body.data).toHaveLength(1);
  expect(page.body.has_more).toBe(true);
});

// getWebhook serves the MCP tool get_webhook and GET /v1/x402/webhooks, whose tests are outside
// this folder's mutation test set: what it reads is pinned here, by calling it directly.
it("reads an agent's webhook with its secret masked to the last four; none is undefined, another account's agent 404", async () => {
  const { agentId } = await agentWithNumber(api);
  expect(await getWebhook(service.core, account.accountId, agentId)).toBeUndefined();
  const generated = await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, protocol: "service-relay/2", capabilities: ["briefing"] });
  expect(generated.status).toBe(201);
  const { secret, secret_changed: _, ...shown } = generated.body;
  expect(await getWebhook(service.core, account.accountId, agentId)).toEqual({ ...shown, secret: `whsec_…${secret.slice(-4)}` });
  // A secret of the user's own is masked the same way.
  await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, secret: "a-secret-of-my-own-ending-in-WXYZ" });
  expect((await getWebhook(service.core, account.accountId, agentId))!.secret).toBe("whsec_…WXYZ");

  const stranger = await createAccount(service.core);
  await expect(getWebhook(service.core, stranger.accountId, agentId)).rejects.toMatchObject({ code: "not_found", status: 404 });
});
