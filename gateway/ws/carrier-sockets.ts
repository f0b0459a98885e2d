import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { CarrierSocketEndpoint, CarrierSocketSession } from "../../core/carrier/carrier.js";
import type { Core } from "../../core/context.js";
import { SocketAcceptor } from "./accept.js";
import type { AccountSockets } from "./account-sockets.js";
import { closeOnRevoke } from "./close-on-revoke.js";
import { upgradeAccount } from "./upgrade-account.js";
import type { UpgradeRoute } from "./upgrades.js";

/**
 * The active carrier's WebSocket endpoints, whatever it declares: Twilio's ConversationRelay
 * socket of a call, the sandbox's softphone. The endpoint checks each upgrade (a signature, the
 * call) before the socket opens, and gets the frames as text; a refusal it throws is the HTTP
 * answer to the upgrade. A socket a client opens is first authenticated here, counted among its
 * account's, and closed when the credential that opened it is revoked.
 */
export function carrierSocketRoutes(core: Core, accountSockets: AccountSockets): UpgradeRoute[] {
  return (core.carrier.endpoints?.sockets ?? []).map((endpoint) => {
    const acceptor = new SocketAcceptor(endpoint.name, endpoint.maxFrameBytes, core.logger);
    return {
      pattern: endpoint.pattern,
      async handle(req, socket, head, match) {
        const { session, credentialId } = await acceptUpgrade(core, accountSockets, endpoint, req, socket, match);
        acceptor.accept(req, socket, head, (ws) => {
          ws.on("close", () => session.closed());
          if (credentialId) closeOnRevoke(core, ws, credentialId);
          session.opened({
            send: (data) => {
              if (ws.readyState === ws.OPEN) ws.send(data);
            },
            close: (code, reason) => ws.close(code, reason),
          });
          ws.on("message", (data) => session.message(String(data)));
        });
      },
      close() {
        acceptor.closeAll();
      },
    };
  });
}

/** The endpoint's session for an upgrade, and the credential to watch when a client opened it. */
async function acceptUpgrade(
  core: Core,
  accountSockets: AccountSockets,
  endpoint: CarrierSocketEndpoint,
  req: IncomingMessage,
  socket: Duplex,
  match: RegExpExecArray,
): Promise<{ session: CarrierSocketSession; credentialId?: string }> {
  const upgrade = { url: req.url ?? "/", headers: req.headers, captured: match.slice(1) };
  if (endpoint.openedBy === "carrier") return { session: await endpoint.accept(upgrade) };
  const { accountId, credentialId } = await upgradeAccount(core, req, { agentToken: true });
  accountSockets.hold(accountId, socket);
  return { session: await endpoint.accept({ ...upgrade, accountId }), credentialId };
}
