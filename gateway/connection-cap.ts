import type { Server } from "node:http";
import type { Socket } from "node:net";
import { limitReached } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import { rawProblemResponse } from "./ws/upgrades.js";

/**
 * Caps the TCP connections one remote address holds open on the server (IP_MAX_CONNECTIONS):
 * idle keep-alives and upgraded WebSockets count as long as they are open. A connection beyond
 * the cap is answered a 429 `limit_reached` naming `ip_connections` and closed, before its
 * request is read. The address is the socket's own: `trust proxy` is an HTTP matter, so behind
 * a proxy this counts the proxy, and the per-client cap belongs there (docs/operating.md).
 */
export function capConnectionsPerAddress(server: Server, max: number, logger: Logger): void {
  const open = new Map<string, number>();
  // One line per address each time it reaches the cap, not one per refused connection.
  const warned = new Set<string>();
  server.on("connection", (socket: Socket) => {
    const address = socket.remoteAddress?.replace(/^::ffff:/, "");
    if (!address) return;
    const count = open.get(address) ?? 0;
    if (count >= max) {
      if (!warned.has(address)) logger.warn({ address, max }, "connections refused: the address holds as many as it may (IP_MAX_CONNECTIONS)");
      warned.add(address);
      const refusal = limitReached("ip_connections", max, `This address already has ${count} connections open, the most it may; close one first.`);
      socket.end(rawProblemResponse(refusal), () => socket.destroy());
      return;
    }
    open.set(address, count + 1);
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
      if (left < max) warned.delete(address);
    });
  });
}
