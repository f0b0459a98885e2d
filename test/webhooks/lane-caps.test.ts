import { inArray } from "drizzle-orm";
import { afterAll, beforeAll, expect, it } from "vitest";
import { webhookDeliveries } from "../../core/db/schema/webhook-deliveries.js";
import { newId } from "../../core/ids.js";
import { findWebhook } from "../../core/webhooks/webhooks.js";
import { DeliveryWorker } from "../../core/webhooks/worker.js";
import { createAccount, type TestAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";

// A process has room for 64 retries in flight (LANE_CAPS in worker.ts), whichever receivers they
// go to. The per-receiver cap is raised to its maximum here, so one hanging receiver could take
// more than the lane's room if the worker did not count it. The service's own worker is stopped;
// the test builds its own (worker.test.ts says why).
const RETRY_LANE_CAP = 64;
let service: TestService;
let account: TestAccount;

beforeAll(async () => {
  service = await startTestService({
    // The receiver hangs: the timeout only has to outlast the test.
    env: { ALLOW_PRIVATE_WEBHOOKS: "1", WEBHOOK_TIMEOUT_MS: "30000", WEBHOOK_RECEIVER_CONCURRENCY: "100" },
  });
  await service.core.webhooks.close();
  account = await createAccount(service.core);
});
afterAll(() => service?.stop());

it("has no more retries in flight than the retry lane's room, however many are due for one receiver", async () => {
  const hook = await startReceiver(() => "hang");
  const worker = new DeliveryWorker(service.core);
  try {
    const { agentId } = await agentWithNumber(new Api(service.baseUrl, account.apiKey));
    expect((await new Api(service.baseUrl, account.apiKey).post("/v1/webhooks", { agent_id: agentId, url: hook.url })).status).toBe(201);
    const { webhookId } = (await findWebhook(service.core.db, agentId))!;
    // Retries due now, written straight to the table: they hold nothing back, so all are claimable at once.
    const jobs = Array.from({ length: RETRY_LANE_CAP + 6 }, () => {
      const messageId = newId("evt");
      return {
        deliveryId: newId("whd"),
        messageId,
        accountId: account.accountId,
        agentId,
        webhookId,
        messageType: "test.message",
        body: { message_id: messageId },
        attempts: 1,
        nextAttemptAt: new Date(Date.now() - 1_000),
      };
    });
    await service.core.db.insert(webhookDeliveries).values(jobs);
    // Twice at once: a kick while a claim is out only asks for another pass, as two passes side by
    // side would each count the whole room before either's jobs are running.
    worker.kick();
    worker.kick();
    await hook.waitFor(RETRY_LANE_CAP, undefined, 10_000);
    // Kicked again with the lane full: nothing more is claimed.
    await new Promise((r) => setTimeout(r, 300));
    worker.kick();
    await new Promise((r) => setTimeout(r, 300));
    expect(hook.requests).toHaveLength(RETRY_LANE_CAP);
    const rows = await service.core.db
      .select()
      .from(webhookDeliveries)
      .where(
        inArray(
          webhookDeliveries.deliveryId,
          jobs.map((j) => j.deliveryId),
        ),
      );
    expect(rows.filter((r) => r.status === "sending")).toHaveLength(RETRY_LANE_CAP);
    expect(rows.filter((r) => r.status === "pending" && r.attempts === 1)).toHaveLength(6);
  } finally {
    // Closed first, so the hanging deliveries that end with the receiver claim nothing more.
    const closing = worker.close();
    await hook.close();
    await closing;
  }
});
