import { createServer } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { expect, it } from "vitest";
import { createLogger } from "../../core/logger.js";
import { attachUpgrades } from "./upgrades.js";

// Node hands an upgrading socket over with no 'error' listener. A route awaits its credential
// check before ws takes the socket over; a reset arriving then must not be an uncaught exception.
it("gives an upgrading socket an error listener before its route runs, so a reset meanwhile is handled", async () => {
  const server = createServer();
  const seen: number[] = [];
  let dropped = false;
  let resetHandled!: () => void;
  const handled = new Promise<void>((resolve) => (resetHandled = resolve));
  attachUpgrades(
    server,
    [
      {
        pattern: /^\/ws$/,
        async handle(_req, socket) {
          seen.push(socket.listenerCount("error"));
          try {
            // An 'error' now reaches the listener (emitting it throws if there is none), which drops the socket.
            socket.emit("error", Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }));
            dropped = socket.destroyed;
          } finally {
            resetHandled();
          }
        },
        close() {},
      },
    ],
    createLogger("silent"),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const client = connect((server.address() as AddressInfo).port, "127.0.0.1", () => {
    client.write("GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n");
  });
  client.on("error", () => {});
  await handled;
  client.destroy();
  await new Promise((resolve) => server.close(resolve));
  expect(seen).toEqual([1]);
  expect(dropped).toBe(true);
});
