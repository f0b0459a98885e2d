import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
  at: number;
  /** When the receiver answered it (unset while it hangs or waits). */
  answeredAt?: number;
}

/**
 * How the receiver answers the nth request (0-based): a status, "hang" to never answer, or a
 * status after a delay (a slow receiver; `answeredAt` on the request says when it answered).
 */
export type Answer = (n: number, request: ReceivedRequest) => number | "hang" | { status: number; afterMs: number };

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
      const reply = (code: number) => {
        request.answeredAt = Date.now();
        res.writeHead(code).end();
      };
      if (typeof status === "number") return reply(status);
      hanging.push(res);
      setTimeout(() => !res.destroyed && reply(status.status), status.afterMs);
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
        if (Date.now() > deadline)
          throw new Error(
            `expected ${n} webhook requests within ${ms} ms, got ${found.length}: ${JSON.stringify(requests.map((r) => r.headers["x-service-event"]))}`,
          );
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
