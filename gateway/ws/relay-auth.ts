import type { IncomingMessage } from "node:http";
import type { Core } from "../../core/context.js";
import { redeemRelayTicket } from "../../core/relay/tickets.js";
import { bearerToken } from "../http/authenticate.js";
import { type UpgradePrincipal, upgradeAccount } from "./upgrade-account.js";

/**
 * The account opening a relay socket: by its `Authorization: Bearer sk_...` header, or, for
 * clients that cannot send headers on an upgrade, by a single-use `?ticket=` from
 * POST /v1/events/ws/ticket. A header, when sent, wins and leaves the ticket unspent. Either way
 * the credential behind it (the key, or the key that minted the ticket) is watched while it is open.
 */
export async function relayUpgradeAccount(core: Core, req: IncomingMessage): Promise<UpgradePrincipal> {
  const query = new URL(req.url ?? "/", "http://localhost").searchParams;
  const ticket = query.get("ticket");
  if (ticket && !bearerToken(req.headers.authorization)) return redeemRelayTicket(core, ticket, query.get("agent_id"));
  return upgradeAccount(core, req);
}
