import type { Core } from "../../core/context.js";
import { SocketAcceptor } from "./accept.js";
import type { UpgradeRoute } from "./upgrades.js";

/**
 * The active carrier's WebSocket endpoints (Twilio's ConversationRelay socket of a call). The
 * adapter checks each upgrade (its signature, the call) before the socket opens, and gets the
 * frames as text; a refusal it throws is the HTTP answer to the upgrade.
 */
export function carrierSocketRoutes(core: Core): UpgradeRoute[] {
  return (core.carrier.endpoints?.sockets ?? []).map((endpoint) => {
    const acceptor = new SocketAcceptor("carrier", 256 * 1024, core.logger);
    return {
      pattern: endpoint.pattern,
      async handle(req, socket, head) {
        const session = await endpoint.accept({ url: req.url ?? "/", headers: req.headers });
        acceptor.accept(req, socket, head, (ws) => {
          session.opened({
            send: (data) => {
              if (ws.readyState === ws.OPEN) ws.send(data);
            },
            close: (code, reason) => ws.close(code, reason),
          });
          ws.on("message", (data) => session.message(String(data)));
          ws.on("close", () => session.closed());
        });
      },
      close() {
        acceptor.closeAll();
      },
    };
  });
}
