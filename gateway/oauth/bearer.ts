import type { Core } from "../../core/context.js";
import { authenticateOAuthToken, type OAuthPrincipal } from "../../core/oauth/connections.js";
import { mcpResource } from "./endpoints.js";
import { authorizationServer } from "./lazy-provider.js";

// oidc-provider's opaque tokens: 256 random bits in base64url. Anything else is no token of ours.
const ACCESS_TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** Whether a Bearer token could be one of this service's OAuth access tokens (not a key, not garbage). */
export const looksLikeAccessToken = (token: string) => ACCESS_TOKEN_SHAPE.test(token);

/**
 * The principal of an OAuth access token presented at /mcp, or null: unknown, expired, revoked,
 * its connection ended, or minted for another resource than this service's /mcp.
 */
export async function authenticateAccessToken(core: Core, token: string): Promise<OAuthPrincipal | null> {
  if (!looksLikeAccessToken(token)) return null;
  return authenticateOAuthToken(core, token, async (value) => {
    const provider = await authorizationServer(core);
    const found = await provider.AccessToken.find(value);
    if (!found?.grantId || !found.accountId || !found.exp) return undefined;
    const audience = Array.isArray(found.aud) ? found.aud : [found.aud];
    if (audience.length !== 1 || audience[0] !== mcpResource(core)) return undefined;
    return { connectionId: found.grantId, accountId: found.accountId, scope: found.scope ?? "", expiresAt: found.exp };
  });
}
