import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { isDelivered, postWebhook } from "../../core/webhooks/http-post.js";

const DEV = "a server started with ALLOW_PRIVATE_WEBHOOKS=1, for development,";
const servers: Array<{ close: () => void; closeAllConnections: () => void }> = [];
afterEach(() => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
  }
});

type Seen = { method?: string; headers: IncomingMessage["headers"]; body: string };
async function receiver(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({ method: req.method, headers: req.headers, body: Buffer.concat(chunks).toString() });
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, seen };
}

const post = (url: string, extra: Partial<Parameters<typeof postWebhook>[0]> = {}) =>
  postWebhook({
    url,
    headers: { "content-type": "application/json", "x-test": "yes" },
    body: '{"text":"héllo"}',
    timeoutMs: 2_000,
    allowPrivate: true,
    ...extra,
  });

describe("isDelivered", () => {
  it("counts only a 2xx", () => {
    expect(isDelivered(null)).toBe(false);
    expect(isDelivered(199)).toBe(false);
    expect(isDelivered(200)).toBe(true);
    expect(isDelivered(204)).toBe(true);
    expect(isDelivered(299)).toBe(true);
    expect(isDelivered(300)).toBe(false);
    expect(isDelivered(500)).toBe(false);
  });
});

describe("postWebhook", () => {
  it("POSTs the body with the given headers and its byte length, and reports the status and latency", async () => {
    const target = await receiver((_req, res) => setTimeout(() => res.writeHead(202).end("ok"), 60));
    const outcome = await post(target.url);
    expect(outcome.statusCode).toBe(202);
    expect(outcome.error).toBeNull();
    expect(outcome.latencyMs).toBeGreaterThanOrEqual(55);
    expect(outcome.latencyMs).toBeLessThan(2_000);
    expect(target.seen).toHaveLength(1);
    expect(target.seen[0]!.method).toBe("POST");
    expect(target.seen[0]!.body).toBe('{"text":"héllo"}');
    expect(target.seen[0]!.headers["content-length"]).toBe(String(Buffer.byteLength('{"text":"héllo"}')));
    expect(target.seen[0]!.headers["x-test"]).toBe("yes");
    expect(target.seen[0]!.headers["content-type"]).toBe("application/json");
  });

  it("reports a non-2xx status as it is, with no error", async () => {
    const target = await receiver((_req, res) => res.writeHead(503).end("busy"));
    expect(await post(target.url)).toMatchObject({ statusCode: 503, error: null });
  });

  it("stops reading a response that passes 64 KiB and still reports its status", async () => {
    // The receiver never ends the response: only cutting it off lets the post finish in time.
    const target = await receiver((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("x".repeat(64 * 1024 + 1));
    });
    const outcome = await post(target.url, { timeoutMs: 1_500 });
    expect(outcome).toMatchObject({ statusCode: 200, error: null });
    expect(outcome.latencyMs).toBeLessThan(1_500);
  });

  it("keeps reading a response of exactly 64 KiB, so one left open runs into the timeout", async () => {
    const target = await receiver((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("x".repeat(64 * 1024));
    });
    expect(await post(target.url, { timeoutMs: 400 })).toMatchObject({ statusCode: null, error: "timed out after 400 ms" });
  });

  it("reports the status of a response whose connection breaks off mid-body", async () => {
    const target = await receiver((_req, res) => {
      res.writeHead(200, { "content-length": "1000" });
      res.write("partial", () => setTimeout(() => res.socket?.destroy(), 20));
    });
    expect(await post(target.url)).toMatchObject({ statusCode: 200, error: null });
  });

  it("gives up on a receiver that never answers, within the timeout", async () => {
    const target = await receiver(() => {});
    const outcome = await post(target.url, { timeoutMs: 300 });
    expect(outcome).toMatchObject({ statusCode: null, error: "timed out after 300 ms" });
    expect(outcome.latencyMs).toBeGreaterThanOrEqual(295);
    expect(outcome.latencyMs).toBeLessThan(1_500);
  });

  it("reports a refused connection with its code", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const outcome = await post(`http://127.0.0.1:${port}/hook`);
    expect(outcome.statusCode).toBeNull();
    expect(outcome.error).toBe(`ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it("refuses a private address unless allowed, with the guard's message alone", async () => {
    const target = await receiver((_req, res) => res.writeHead(200).end());
    const url = target.url.replace("127.0.0.1", "localhost");
    // Without the setting, http:// is refused before the name is even looked up.
    expect(await post(url, { allowPrivate: false })).toMatchObject({
      statusCode: null,
      error: `not sent: the URL must be an https:// URL (${DEV} allows http://)`,
    });
    expect(target.seen).toHaveLength(0);
    expect(await post(url, { allowPrivate: true })).toMatchObject({ statusCode: 200, error: null });
  });
});
