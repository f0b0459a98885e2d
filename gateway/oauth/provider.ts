import Provider, { type Configuration, errors, type KoaContextWithOIDC } from "oidc-provider";
import type { Core } from "../../core/context.js";
import { ALL_SCOPES } from "../../core/oauth/scopes.js";
import { NOTICE_PAGE_HEADERS } from "../http/notice-page.js";
import { RecordAdapter } from "./adapter.js";
import { CONNECTION_LIFETIME_MS, mcpResource, OAUTH_PATHS } from "./endpoints.js";
import { cookieKeys, signingKey } from "./keys.js";
import { guardedFetch, METADATA_MAX_BYTES } from "./metadata-fetch.js";
import { problemPage } from "./pages.js";

// A refresh token lives 30 days from its last use; a browser's sign-in here an hour (long
// enough to approve a client and its step-up, no more).
const GRANT_TTL_S = CONNECTION_LIFETIME_MS / 1000;
const REFRESH_TOKEN_TTL_S = 30 * 24 * 3600;
const SESSION_TTL_S = 3600;
const INTERACTION_TTL_S = 30 * 60;
const CODE_TTL_S = 60;

const providers = new WeakMap<Core, Provider>();

/**
 * The OAuth 2.1 authorization server for /mcp, made on first use: its issuer is
 * the public base URL, known once the server listens. oidc-provider does the protocol; what is
 * ours is its storage (database rows), its pages (gateway/oauth/interactions.ts), the fetch of
 * client ID metadata documents (through the webhook SSRF guard), and the one resource it mints
 * tokens for.
 */
export function oauthProvider(core: Core): Provider {
  let provider = providers.get(core);
  if (!provider) providers.set(core, (provider = createProvider(core)));
  return provider;
}

function createProvider(core: Core): Provider {
  const resource = mcpResource(core);
  const resourceServer = {
    scope: ALL_SCOPES.join(" "),
    audience: resource,
    accessTokenTTL: core.config.oauthAccessTokenTtlS,
    accessTokenFormat: "opaque" as const,
  };
  const configuration: Configuration & Record<string, unknown> = {
    adapter: (kind: string) => new RecordAdapter(core, kind),
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    jwks: { keys: [signingKey(core.secrets)] },
    cookies: {
      keys: cookieKeys(core.secrets),
      names: { session: "agentline_oauth_session", interaction: "agentline_oauth_interaction", resume: "agentline_oauth_resume" },
      long: { httpOnly: true, sameSite: "lax" },
      short: { httpOnly: true, sameSite: "lax" },
    },
    routes: {
      authorization: OAUTH_PATHS.authorization,
      token: OAUTH_PATHS.token,
      registration: OAUTH_PATHS.registration,
      revocation: OAUTH_PATHS.revocation,
      jwks: OAUTH_PATHS.jwks,
    },
    // Authorization code with PKCE S256, and refresh tokens; nothing else.
    responseTypes: ["code"],
    pkce: { required: () => true },
    clientAuthMethods: ["none", "client_secret_basic", "client_secret_post"],
    clientDefaults: {
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      id_token_signed_response_alg: "EdDSA",
    },
    enabledJWA: { idTokenSigningAlgValues: ["EdDSA"] },
    // A client's own `scope` (registered, or in its metadata document) is dropped, not checked:
    // oidc-provider would hold it to its OpenID scopes, and as an allow-list it would stop the
    // client asking for more later (a step-up). What a client may do is what the person allows.
    extraClientMetadata: {
      properties: ["scope"],
      validator: (_ctx: unknown, key: string, _value: unknown, metadata: Record<string, unknown>) => {
        if (key === "scope") delete metadata.scope;
      },
    },
    scopes: ["openid", "offline_access"],
    claims: { openid: ["sub"] },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, issueRegistrationAccessToken: false },
      // A client may revoke its own tokens only; another's is ignored (200, as RFC 7009 has it).
      revocation: {
        enabled: true,
        allowedPolicy: (_ctx: unknown, client: { clientId: string }, token: { clientId?: string }) => token.clientId === client.clientId,
      },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      // Tokens are plain Bearer tokens: /mcp checks no proof of possession.
      dPoP: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: KoaContextWithOIDC, indicator: string) => {
          if (indicator !== resource) throw new errors.InvalidTarget(`this server issues tokens only for ${resource}`);
          return resourceServer;
        },
      },
      clientIdMetadataDocument: { enabled: true, ack: "draft-02", cacheDuration: { min: 60, max: 24 * 3600 } },
    },
    fetch: guardedFetch(core.config.allowPrivateWebhooks),
    fetchResponseBodyLimits: { "client_id metadata document": METADATA_MAX_BYTES },
    ttl: {
      AccessToken: core.config.oauthAccessTokenTtlS,
      AuthorizationCode: CODE_TTL_S,
      Grant: GRANT_TTL_S,
      RefreshToken: REFRESH_TOKEN_TTL_S,
      Session: SESSION_TTL_S,
      Interaction: INTERACTION_TTL_S,
    },
    // A token outlives the browser sign-in it came from: it belongs to the connection.
    expiresWithSession: () => false,
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    rotateRefreshToken: () => true,
    // Any revoked or replayed token ends its whole connection (grant).
    revokeGrantPolicy: () => true,
    clockTolerance: 5,
    interactions: { url: (_ctx, interaction) => `${OAUTH_PATHS.interaction}/${interaction.uid}` },
    renderError: (ctx, out, error) => {
      ctx.type = "html";
      ctx.set(NOTICE_PAGE_HEADERS);
      const detail = (error as { error_detail?: string }).error_detail;
      ctx.body = problemPage(
        "This sign-in cannot go on",
        `${String(out.error)}: ${String(out.error_description ?? "")}`,
        detail ? `Why: ${detail}` : "Start again from the app that sent you here.",
      );
    },
  };
  const provider = new Provider(core.baseUrl, configuration as Configuration);
  // The provider sees every request as addressed to BASE_URL (gateway/oauth/mount.ts says why).
  provider.proxy = true;
  provider.on("server_error", (_ctx, error) => core.logger.error({ err: error }, "oauth server error"));
  provider.use(async (ctx, next) => {
    // A request that names no scope asks for the default, every scope (the consent page lists them).
    if (ctx.path === OAUTH_PATHS.authorization && ctx.method === "GET" && !ctx.query.scope) ctx.query = { ...ctx.query, scope: ALL_SCOPES.join(" ") };
    await next();
    // Its own list holds only the OpenID scopes; the scopes of /mcp are what clients ask for.
    if (ctx.oidc?.route === "discovery" && ctx.body && typeof ctx.body === "object") {
      (ctx.body as Record<string, unknown>).scopes_supported = [...ALL_SCOPES, "openid", "offline_access"];
    }
  });
  allowAnyLoopbackPort(provider);
  return provider;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** The same http loopback redirect URI but for its port (RFC 8252 §7.3: a native app listens where it can). */
function sameButLoopbackPort(registered: string, asked: string): boolean {
  if (!URL.canParse(registered) || !URL.canParse(asked)) return false;
  const [a, b] = [new URL(registered), new URL(asked)];
  if (a.protocol !== "http:" || !LOOPBACK_HOSTS.has(a.hostname)) return false;
  a.port = b.port;
  return a.href === b.href;
}

/**
 * A client's http loopback redirect URI matches whatever port it names, whatever kind of client
 * registered it: oidc-provider allows that for `application_type: native` only, and MCP clients
 * on the person's own machine (Claude Code, VS Code, Cursor) register as web clients or publish
 * one metadata document for every run. Every other redirect URI is matched exactly.
 */
function allowAnyLoopbackPort(provider: Provider): void {
  const Client = provider.Client as unknown as { prototype: { redirectUriAllowed(value: string): boolean; redirectUris?: string[] } };
  const exact = Client.prototype.redirectUriAllowed;
  Client.prototype.redirectUriAllowed = function (this: { redirectUris?: string[] }, value: string) {
    return exact.call(this, value) || (this.redirectUris ?? []).some((registered) => sameButLoopbackPort(registered, value));
  };
}
