import type { IncomingMessage } from "node:http";
import { authenticateAgentToken } from "../../core/auth/agent-tokens.js";
import { authenticateApiKey } from "../../core/auth/api-keys.js";
import type { Core } from "../../core/context.js";
import { bearerToken } from "../http/authenticate.js";
import { UpgradeRefusal } from "./upgrades.js";

/** Who opens a socket: the account, and the credential (key_id or token_id) that stays watched while it is open. */
export interface UpgradePrincipal {
  accountId: string;
  credentialId: string;
}

/** The account of an upgrade request's bearer API key (or, where allowed, agent token), or a 401 refusal. */
export async function upgradeAccount(core: Core, req: IncomingMessage, options: { agentToken?: boolean } = {}): Promise<UpgradePrincipal> {
  const token = bearerToken(req.headers.authorization);
  const agentToken = token?.startsWith("at_") && options.agentToken;
  const principal = !token ? null : agentToken ? await upgradeAgentToken(core, token) : await upgradeApiKey(core, token);
  if (!principal) {
    const why = !token
      ? "Send your API key as 'Authorization: Bearer sk_...' on the upgrade request."
      : `The ${agentToken ? "agent_token" : "API key"} is invalid or has been revoked.`;
    throw new UpgradeRefusal("unauthorized", why, {
      "WWW-Authenticate": 'Bearer realm="agentline"',
    });
  }
  return principal;
}

async function upgradeApiKey(core: Core, token: string): Promise<UpgradePrincipal | null> {
  const principal = await authenticateApiKey(core, token);
  return principal && { accountId: principal.accountId, credentialId: principal.keyId };
}

async function upgradeAgentToken(core: Core, token: string): Promise<UpgradePrincipal | null> {
  const principal = await authenticateAgentToken(core, token);
  return principal && { accountId: principal.accountId, credentialId: principal.tokenId };
}
