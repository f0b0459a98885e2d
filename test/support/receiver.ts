import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
  at: number;
}

/** How the receiver answers the nth request (0-based): a status, or "hang" to never answer. */
export type Answer = (n: number, request: ReceivedRequest) => number | "hang";

/**
 * A real HTTP server on loopback standing in for a customer's webhook endpoint: it keeps every
 * request (raw body included, for signature checks) and answers as the test says.
 */
export async function startReceiver(answer: Answer = () => 200) {
  const requests: ReceivedRequest[] = [];
  const hanging: ServerResponse[] = [];
  let respond = answer;
  const waiters: Array<() => void> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const request: ReceivedRequest = { headers: req.headers, raw, body: raw ? JSON.parse(raw) : undefined, at: Date.now() };
      const status = respond(requests.length, request);
      requests.push(request);
      waiters.splice(0).forEach((wake) => wake());
      if (status === "hang") return void hanging.push(res);
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    requests,
    answerWith(next: Answer) {
      respond = next;
    },
    /** Waits until at least n requests (matching the filter, if given) have arrived. */
    async waitFor(n: number, filter: (r: ReceivedRequest) => boolean = () => true, ms = 10_000): Promise<ReceivedRequest[]> {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = requests.filter(filter);
        if (found.length >= n) return found;
        if (Date.now() > deadline) throw new Error(`expected ${n} webhook requests within ${ms} ms, got ${found.length}: ${JSON.stringify(requests.map((r) => r.headers["x-service-event"]))}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 50);
        });
      }
    },
    async close() {
      hanging.forEach((res) => res.destroy());
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
