import { createHmac } from "node:crypto";
import { verify as verifyGithub } from "@octokit/webhooks-methods";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhooks } from "../../core/db/schema/webhooks.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { statementsWaitingForALock } from "../support/postgres.js";
import { startReceiver } from "../support/receiver.js";
import { onPostgres, startTestService, type TestService } from "../support/service.js";

let service: TestService;
let guarded: TestService;
let api: Api;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  [service, guarded] = await Promise.all([startTestService({ env: { ALLOW_PRIVATE_WEBHOOKS: "1" } }), startTestService()]);
  api = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await Promise.all([service?.stop(), guarded?.stop()]);
});

async function newAgent(client: Api): Promise<string> {
  const created = await client.post("/v1/agents", { name: "Hooked" });
  expect(created.status).toBe(201);
  return created.body.agent_id;
}

/** Sends webhook.test and returns the delivery the receiver got. */
async function testDelivery(agentId: string) {
  const before = receiver.requests.length;
  const sent = await api.post("/v1/webhooks/test", undefined, { query: { agent_id: agentId } });
  expect(sent.body).toMatchObject({ delivered: true, status_code: 200 });
  const [delivery] = (await receiver.waitFor(before + 1)).slice(before);
  return delivery!;
}

describe("replacing a webhook keeps its secret unless asked", () => {
  it("keeps the secret on a re-POST without one, so the receiver's secret still verifies, and says it did not change", async () => {
    const agentId = await newAgent(api);
    const created = await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url });
    expect(created.status).toBe(201);
    expect(created.body.secret_changed).toBe(true);
    const secret: string = created.body.secret;
    expect(secret).toMatch(/^whsec_/);

    const replaced = await api.post("/v1/webhooks", { agent_id: agentId, url: `${receiver.url}?moved=1` });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ url: `${receiver.url}?moved=1`, secret_changed: false, secret: `whsec_…${secret.slice(-4)}` });
    const delivery = await testDelivery(agentId);
    expect(delivery.headers["x-webhook-signature"]).toBe(createHmac("sha256", secret).update(delivery.raw).digest("hex"));
  });

  it("rotates on rotate_secret: true, shows the new secret once, and signs with it from then on", async () => {
    const agentId = await newAgent(api);
    const first = (await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url })).body.secret;
    const rotated = await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, rotate_secret: true });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret_changed).toBe(true);
    expect(rotated.body.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{32}$/);
    expect(rotated.body.secret).not.toBe(first);
    const delivery = await testDelivery(agentId);
    expect(delivery.headers["x-webhook-signature"]).toBe(createHmac("sha256", rotated.body.secret).update(delivery.raw).digest("hex"));
    expect(delivery.headers["x-webhook-signature"]).not.toBe(createHmac("sha256", first).update(delivery.raw).digest("hex"));
  });

  it("takes a given secret, says whether it differs, and refuses a secret together with rotate_secret", async () => {
    const agentId = await newAgent(api);
    await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, secret: "first-secret-of-length" });
    const same = await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, secret: "first-secret-of-length" });
    expect(same.body).toMatchObject({ secret_changed: false });
    const other = await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, secret: "second-secret-of-length" });
    expect(other.body).toMatchObject({ secret_changed: true, secret: "second-secret-of-length" });
    const both = await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, secret: "third-secret-of-length", rotate_secret: true });
    expect(both.status).toBe(422);
    expect(both.body.errors).toEqual([{ field: "rotate_secret", in: "body", message: "cannot be true when a secret is given: send one or the other" }]);
    const delivery = await testDelivery(agentId);
    expect(delivery.headers["x-webhook-signature"]).toBe(createHmac("sha256", "second-secret-of-length").update(delivery.raw).digest("hex"));
  });

  // Two connections at once, which PGlite (one transaction at a time) cannot have.
  it.runIf(onPostgres)("keeps the secret, masked to its last four, when the webhook is deleted while a re-POST replaces it", async () => {
    const agentId = await newAgent(api);
    const created = await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url });
    const secret: string = created.body.secret;
    // A test transaction deletes the webhook and holds the deletion uncommitted: the re-POST still
    // finds the webhook (and keeps its secret), then its insert waits on the deleted row. Committed,
    // the row is gone, so the insert makes a new one, from the values of a webhook being created.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const deleter = service.core.db.transaction(async (tx) => {
      await tx.delete(webhooks).where(eq(webhooks.agentId, agentId));
      held();
      await gate;
    });
    await holding;
    const replacing = api.post("/v1/webhooks", { agent_id: agentId, url: `${receiver.url}?again=1` });
    await statementsWaitingForALock(service.core.db, 1);
    release();
    await deleter;
    const replaced = await replacing;
    // A new webhook (the old one was deleted), answered as the replacement the request asked for.
    expect(replaced.status).toBe(200);
    expect(replaced.body.webhook_id).not.toBe(created.body.webhook_id);
    expect(replaced.body).toMatchObject({ url: `${receiver.url}?again=1`, secret_changed: false, secret: `whsec_…${secret.slice(-4)}` });
    const listed = await api.get("/v1/webhooks", { query: { agent_id: agentId } });
    expect(listed.body.data.map((w: any) => w.secret)).toEqual([`whsec_…${secret.slice(-4)}`]);
    const delivery = await testDelivery(agentId);
    expect(delivery.headers["x-webhook-signature"]).toBe(createHmac("sha256", secret).update(delivery.raw).digest("hex"));
  });
});

describe("X-Hub-Signature-256", () => {
  it("carries GitHub's sha256=<hex>, which @octokit/webhooks-methods verifies; the default header stays bare hex", async () => {
    const agentId = await newAgent(api);
    const secret = "github-style-secret-value";
    await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, secret, signature_header: "X-Hub-Signature-256" });
    const delivery = await testDelivery(agentId);
    const signature = delivery.headers["x-hub-signature-256"] as string;
    expect(signature).toBe(`sha256=${createHmac("sha256", secret).update(delivery.raw).digest("hex")}`);
    expect(await verifyGithub(secret, delivery.raw, signature)).toBe(true);
    expect(await verifyGithub("another-secret-entirely", delivery.raw, signature)).toBe(false);

    await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url, secret });
    const plain = await testDelivery(agentId);
    expect(plain.headers["x-webhook-signature"]).toBe(createHmac("sha256", secret).update(plain.raw).digest("hex"));
  });
});

describe("webhook targets a server refuses", () => {
  it.each([
    [
      "https://127.0.0.1/hook",
      "must not point at a private, loopback or link-local address (a server started with ALLOW_PRIVATE_WEBHOOKS=1, for development, allows them)",
    ],
    [
      "https://localhost:8443/hook",
      "must not point at a private, loopback or link-local address (a server started with ALLOW_PRIVATE_WEBHOOKS=1, for development, allows them)",
    ],
    ["http://hooks.example.com/hook", "must be an https:// URL (a server started with ALLOW_PRIVATE_WEBHOOKS=1, for development, allows http://)"],
  ])("names ALLOW_PRIVATE_WEBHOOKS when refusing %s", async (url, message) => {
    const client = new Api(guarded.baseUrl, (await createAccount(guarded.core)).apiKey);
    const agentId = await newAgent(client);
    const refused = await client.post("/v1/webhooks", { agent_id: agentId, url });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([{ field: "url", in: "body", message }]);
  });
});
