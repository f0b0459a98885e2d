import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";

// Retries hold nothing back, so a hanging receiver could collect them all; the worker lets no
// receiver have more than WEBHOOK_RECEIVER_CONCURRENCY deliveries in flight in a lane.
let service: TestService;
beforeAll(async () => {
  service = await startTestService({
    env: { ALLOW_PRIVATE_WEBHOOKS: "1", WEBHOOK_RETRY_SCHEDULE: "20ms,20ms", WEBHOOK_TIMEOUT_MS: "2000", WEBHOOK_RECEIVER_CONCURRENCY: "2" },
  });
});
afterAll(() => service?.stop());

it("sends a hanging receiver no more retries at once than its concurrency", async () => {
  let open = 0;
  let most = 0;
  let firsts = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    if (req.headers["x-service-delivery-attempt"] === "1") {
      firsts++;
      res.writeHead(500).end();
      return;
    }
    open++;
    most = Math.max(most, open);
    req.socket.on("close", () => open--);
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  try {
    const api = new Api(service.baseUrl, (await createAccount(service.core)).apiKey);
    const { agentId, phoneNumber } = await agentWithNumber(api);
    await api.post("/v1/webhooks", { agent_id: agentId, url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` });
    for (let i = 0; i < 5; i++) await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550180", text: `m${i}` });
    await expect.poll(() => firsts, { timeout: 5_000 }).toBe(5);
    await expect.poll(() => open, { timeout: 1_500 }).toBe(2);
    await new Promise((r) => setTimeout(r, 500));
    expect(most).toBe(2);
  } finally {
    receiver.closeAllConnections();
    receiver.close();
  }
});
