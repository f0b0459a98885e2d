import type { AddressInfo } from "node:net";
import { connect, createServer, type Socket } from "node:net";

/**
 * A loopback TCP proxy in front of a service: clients keep one address while the service behind
 * it restarts (on another port), and the test can cut every connection at once, as a network
 * drop would, without either end closing cleanly. `partition` makes the service unreachable the
 * way a network outage does: open connections are reset and new ones get no answer (they are
 * held, not refused) until `heal`, when they go through, late, as a retransmitted SYN would;
 * `refuse` is a restarting server instead: connections reset, new ones refused until `heal`.
 */
export async function startTcpProxy(initialTarget: number) {
  let target = initialTarget;
  let partitioned = false;
  let refusing = false;
  const held: Socket[] = [];
  const pairs = new Set<[Socket, Socket]>();
  const forward = (client: Socket) => {
    if (client.destroyed) return;
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
  };
  const server = createServer((client) => {
    if (refusing) return void client.resetAndDestroy();
    if (!partitioned) return forward(client);
    // Bytes the client sends meanwhile stay buffered in the socket until it is forwarded.
    client.pause();
    client.on("error", () => client.destroy());
    held.push(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const dropAll = () => {
    for (const [a, b] of pairs) {
      a.resetAndDestroy();
      b.resetAndDestroy();
    }
    pairs.clear();
  };
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    /** Sends new connections to another port. */
    retarget(next: number) {
      target = next;
    },
    /** Cuts every open connection (both sides see a reset). */
    dropAll,
    /** Resets every open connection and holds new ones unanswered until `heal`. */
    partition() {
      partitioned = true;
      dropAll();
    },
    /** Resets every open connection and refuses new ones until `heal`, as a restarting server does. */
    refuse() {
      refusing = true;
      dropAll();
    },
    /** Ends the partition or refusal: held connections go through, new ones pass straight on. */
    heal() {
      partitioned = false;
      refusing = false;
      for (const client of held.splice(0)) {
        forward(client);
        client.resume();
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const [a, b] of pairs) a.destroy(), b.destroy();
        for (const client of held.splice(0)) client.destroy();
        server.close(() => resolve());
      }),
  };
}
