import { createServer, connect, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

/**
 * A loopback TCP proxy in front of a service: clients keep one address while the service behind
 * it restarts (on another port), and the test can cut every connection at once, as a network
 * drop would, without either end closing cleanly.
 */
export async function startTcpProxy(initialTarget: number) {
  let target = initialTarget;
  const pairs = new Set<[Socket, Socket]>();
  const server = createServer((client) => {
    const upstream = connect(target, "127.0.0.1");
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    /** Sends new connections to another port. */
    retarget(next: number) {
      target = next;
    },
    /** Cuts every open connection (both sides see a reset). */
    dropAll() {
      for (const [a, b] of pairs) {
        a.resetAndDestroy();
        b.resetAndDestroy();
      }
      pairs.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const [a, b] of pairs) (a.destroy(), b.destroy());
        server.close(() => resolve());
      }),
  };
}
