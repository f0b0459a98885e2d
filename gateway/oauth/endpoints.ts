import type { Core } from "../../core/context.js";

/** Where the authorization server's endpoints are, under the issuer (BASE_URL). */
export const OAUTH_PATHS = {
  authorization: "/oauth/authorize",
  token: "/oauth/token",
  registration: "/oauth/register",
  revocation: "/oauth/revoke",
  jwks: "/oauth/jwks",
  interaction: "/oauth/interaction",
} as const;

/** The protected resource metadata of /mcp (RFC 9728, path form). */
export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource/mcp";

/** The protected resource: the MCP endpoint every token is minted for (RFC 8707). */
export const mcpResource = (core: Core) => `${core.baseUrl}/mcp`;

/** A connection lasts a year at most (its refresh tokens 30 days from their last use). */
export const CONNECTION_LIFETIME_MS = 365 * 24 * 3600 * 1000;
