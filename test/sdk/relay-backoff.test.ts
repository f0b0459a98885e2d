import { type AddressInfo, createServer } from "node:net";
import { type RelayStatus, relay } from "@agentline/sdk";
import { describe, expect, it } from "vitest";

/** A loopback port nothing listens on: every connection to it is refused at once. */
async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

describe("the SDK's relay client, while the service is unreachable", () => {
  it("keeps reconnecting with growing, jittered delays up to its cap: no tight loop, no lockstep", { timeout: 30_000 }, async () => {
    const port = await refusedPort();
    // The relay asks for a URL (a fresh ticket) before each connection: that is each attempt.
    const attempts: number[] = [];
    const statuses: RelayStatus[] = [];
    const connection = relay(
      "agt_unreachable",
      {},
      {
        url: async () => (attempts.push(Date.now()), `ws://127.0.0.1:${port}/v1/events/ws?agent_id=agt_unreachable`),
        backoff: { initialMs: 20, maxMs: 640 },
        onStatus: (status) => statuses.push(status),
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    await connection.close();

    const gaps = attempts.slice(1).map((at, i) => at - attempts[i]!);
    // Retrying without a delay would make hundreds of attempts in 6 s; never retrying, one.
    expect(attempts.length).toBeGreaterThanOrEqual(10);
    expect(attempts.length).toBeLessThan(60);
    // Backoff: later delays (up to 640 ms) are longer on average than the first ones (up to 40, 80, 160 ms).
    expect(mean(gaps.slice(-8))).toBeGreaterThan(mean(gaps.slice(0, 3)));
    // Capped: no delay far beyond maxMs (a refused connection itself takes a few ms).
    expect(Math.max(...gaps)).toBeLessThan(640 + 500);
    // Jitter: once at the cap (from the 6th delay) each delay is drawn from 0 to 640 ms, so they
    // are spread out and some are well below the cap; a fixed delay would be 640 ms every time.
    const capped = gaps.slice(5);
    expect(Math.max(...capped) - Math.min(...capped)).toBeGreaterThan(100);
    expect(Math.min(...capped)).toBeLessThan(450);
    expect(statuses).toContain("reconnecting");
    await expect.poll(() => connection.status).toBe("closed");
  });
});
