import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postWebhook } from "../../core/webhooks/http-post.js";
import { createAccount } from "../../harness/accounts.js";
import { Api } from "../../harness/api.js";
import { bystander } from "../support/bystander.js";
import { databaseForProcess } from "../support/mcp.js";
import { startReceiver } from "../support/receiver.js";
import { onPostgres, startTestService } from "../support/service.js";
import { agentWithNumber } from "../support/telephony.js";

// A webhook URL is checked when it is stored, and its target again at every delivery: the
// setting that allowed a private target may be gone since, and a name may be re-pointed. Node
// never resolves an IP literal, so the resolver's guard alone let these through.
const DEV = "a server started with ALLOW_PRIVATE_WEBHOOKS=1, for development,";
const PRIVATE = `not sent: the URL must not point at a private, loopback or link-local address (${DEV} allows them)`;
const HTTP = `not sent: the URL must be an https:// URL (${DEV} allows http://)`;

/** A TCP listener on every loopback address that counts the connections made to it: none may be. */
let listener: Server;
let port: number;
let connections = 0;
beforeAll(async () => {
  listener = createServer((_req, res) => res.end());
  listener.on("connection", () => connections++);
  await new Promise<void>((resolve) => listener.listen(0, "::", resolve));
  port = (listener.address() as AddressInfo).port;
});
afterAll(() => listener?.close());

const post = (url: string) => postWebhook({ url, headers: { "content-type": "application/json" }, body: "{}", timeoutMs: 2_000, allowPrivate: false });

describe("every delivery checks its target, an IP literal as much as a name", () => {
  // Each spelling the URL parser turns into a loopback, unspecified or mapped address.
  it.each([
    "https://127.0.0.1:PORT/hook",
    "https://127.1:PORT/hook",
    "https://2130706433:PORT/hook",
    "https://0x7f.0.0.1:PORT/hook",
    "https://0177.0.0.1:PORT/hook",
    "https://0.0.0.0:PORT/hook",
    "https://0:PORT/hook",
    "https://[::1]:PORT/hook",
    "https://[0:0:0:0:0:0:0:1]:PORT/hook",
    "https://[::]:PORT/hook",
    "https://[::ffff:127.0.0.1]:PORT/hook",
    "https://[::ffff:7f00:1]:PORT/hook",
    "https://[::127.0.0.1]:PORT/hook",
    "https://169.254.169.254:PORT/latest/meta-data",
  ])("refuses %s before connecting, with the guard's message", async (template) => {
    const outcome = await post(template.replace("PORT", String(port)));
    expect(outcome).toMatchObject({ statusCode: null, error: PRIVATE });
    expect(connections).toBe(0);
  });

  it("refuses http:// without the setting, even to a public address", async () => {
    expect(await post("http://93.184.216.34/hook")).toMatchObject({ statusCode: null, error: HTTP });
    expect(await post(`http://127.0.0.1:${port}/hook`)).toMatchObject({ statusCode: null, error: HTTP });
    expect(connections).toBe(0);
  });
});

describe("a private webhook stored while allowed", () => {
  it("is refused and recorded after a restart without the setting, reaches nothing, and another tenant is served", async () => {
    const database = await databaseForProcess();
    const on = onPostgres ? { databaseUrl: database.env.DATABASE_URL! } : { dataDir: database.env.DATA_DIR! };
    const retries = { WEBHOOK_RETRY_SCHEDULE: "20ms,40ms", WEBHOOK_TIMEOUT_MS: "2000" };
    const receiver = await startReceiver();
    try {
      const allowing = await startTestService({ ...on, env: { ALLOW_PRIVATE_WEBHOOKS: "1", ...retries } });
      const account = await createAccount(allowing.core);
      const api = new Api(allowing.baseUrl, account.apiKey);
      const { agentId, phoneNumber } = await agentWithNumber(api);
      expect((await api.post("/v1/webhooks", { agent_id: agentId, url: receiver.url })).status).toBe(201);
      await allowing.stop();

      const strict = await startTestService({ ...on, env: retries });
      try {
        const again = new Api(strict.baseUrl, account.apiKey);
        const other = await bystander(strict);
        await again.post("/v1/sandbox/inbound/sms", { to_number: phoneNumber, from_number: "+14155550150", text: "to loopback?" });
        await expect
          .poll(
            async () =>
              (await again.get("/v1/webhooks/deliveries", { query: { agent_id: agentId } })).body.data.map((a: any) => [
                a.attempt,
                a.status_code,
                a.outcome,
                a.error,
              ]),
            { timeout: 10_000 },
          )
          .toEqual([3, 2, 1].map((n) => [n, null, "failed", HTTP]));
        // Given up on, the event waits in the mailbox as undeliverable ones do.
        await expect
          .poll(async () => (await again.get("/v1/events/peek", { query: { agent_id: agentId } })).body.data.map((e: any) => e.payload.text), {
            timeout: 10_000,
          })
          .toEqual(["to loopback?"]);
        expect(receiver.requests).toHaveLength(0);
        await other.check();
      } finally {
        await strict.stop();
      }
    } finally {
      await receiver.close();
      await database.drop();
    }
  });
});
