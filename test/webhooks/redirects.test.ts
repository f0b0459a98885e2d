import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { startReceiver } from "../support/receiver.js";
import { startTestService, type TestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";

// Only a 2xx is a delivery. A receiver that answers with a redirect has not taken the event:
// counting it delivered would make the event vanish from the mailbox.
let service: TestService;
beforeAll(async () => {
  service = await startTestService({ env: { ALLOW_PRIVATE_WEBHOOKS: "1", WEBHOOK_RETRY_SCHEDULE: "20ms,40ms,60ms", WEBHOOK_TIMEOUT_MS: "2000" } });
});
afterAll(() => service?.stop());

it.each([301, 302, 307, 308])("treats a %i as a failed attempt, follows no redirect, and returns the event to the mailbox", async (status) => {
  const target = await startReceiver();
  let asked = 0;
  const redirecting = createServer((req, res) => {
    asked++;
    req.resume();
    res.writeHead(status, { location: target.url }).end();
  });
  await new Promise<void>((resolve) => redirecting.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/hook`;
  try {
    const account = await createAccount(service.core);
    const api = new Api(service.baseUrl, account.apiKey);
    const { agentId, phoneNumber } = await agentWithNumber(api);
    await api.post("/v1/webhooks", { agent_id: agentId, url });
    await api.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550150", text: "moved?" });

    await expect.poll(() => asked, { timeout: 10_000 }).toBe(4);
    await expect
      .poll(
        async () =>
          (await api.get("/v1/webhooks/deliveries", { query: { agent_id: agentId } })).body.data.map((a: any) => [a.attempt, a.status_code, a.outcome]),
        { timeout: 10_000 },
      )
      .toEqual([4, 3, 2, 1].map((n) => [n, status, "failed"]));
    await expect
      .poll(async () => (await api.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data.map((e: any) => e.payload.text), { timeout: 10_000 })
      .toEqual(["moved?"]);
    expect(target.requests).toHaveLength(0);
  } finally {
    redirecting.close();
    await target.close();
  }
});
