import type { Request } from "express";
import { authenticateAgentToken } from "../../core/auth/agent-tokens.js";
import { authenticateApiKey } from "../../core/auth/api-keys.js";
import type { Core } from "../../core/context.js";
import { AppError } from "../../core/errors.js";
import { ALL_SCOPES } from "../../core/oauth/scopes.js";
import type { AuthPolicy } from "../../discovery/operation.js";
import { authenticateAccessToken } from "../oauth/bearer.js";
import { PROTECTED_RESOURCE_PATH } from "../oauth/endpoints.js";
import { wrongCredentialDetail } from "./credential-hints.js";
import type { AgentTokenAuth, Anonymous, ApiKeyAuth, Caller, OAuthAuth, PushTokenAuth, UnpaidAuth } from "./principal.js";

/** The bearer token of an Authorization header, or undefined when it is absent or not `Bearer <token>`. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
  return match?.[1];
}

/** `WWW-Authenticate` for a 401, per RFC 6750. */
function challenge(error?: string): Record<string, string> {
  return { "WWW-Authenticate": error ? `Bearer realm="agentline", error="${error}"` : `Bearer realm="agentline"` };
}

/**
 * `WWW-Authenticate` for a 401 at /mcp: also the way for an OAuth client to find this service's
 * authorization server (RFC 9728's resource_metadata), and the scopes to ask for.
 */
export function mcpChallenge(core: Core, error?: string): Record<string, string> {
  const params = [`resource_metadata="${core.baseUrl}${PROTECTED_RESOURCE_PATH}"`, `scope="${ALL_SCOPES.join(" ")}"`];
  return { "WWW-Authenticate": `Bearer ${['realm="agentline"', ...(error ? [`error="${error}"`] : []), ...params].join(", ")}` };
}

/** /mcp: an API key or agent token as everywhere, or an OAuth access token this service issued for it. */
async function authenticateMcp(core: Core, token: string | undefined): Promise<ApiKeyAuth | AgentTokenAuth | OAuthAuth> {
  if (!token) {
    throw new AppError(
      "unauthorized",
      `Missing credentials. Send an API key ('Authorization: Bearer sk_...') or an agent_token, or sign in with OAuth: ${core.baseUrl}${PROTECTED_RESOURCE_PATH} names the authorization server.`,
      { headers: mcpChallenge(core) },
    );
  }
  if (token.startsWith("at_")) {
    const principal = await authenticateAgentToken(core, token);
    if (!principal) {
      throw new AppError(
        "unauthorized",
        "The agent_token is invalid or has been revoked. Get one from the top-up route, /v1/billing/topup/x402/pay, or POST /v1/auth/agent-tokens with an API key.",
        {
          headers: mcpChallenge(core, "invalid_token"),
        },
      );
    }
    return { kind: "agent_token", accountId: principal.accountId, tokenId: principal.tokenId };
  }
  if (token.startsWith("sk_")) {
    const principal = await authenticateApiKey(core, token);
    if (!principal) throw new AppError("unauthorized", "The API key is invalid or has been revoked.", { headers: mcpChallenge(core, "invalid_token") });
    return { kind: "api_key", ...principal };
  }
  const wrongKind = wrongCredentialDetail("mcp", token);
  if (wrongKind) throw new AppError("unauthorized", wrongKind, { headers: mcpChallenge(core, "invalid_token") });
  const principal = await authenticateAccessToken(core, token);
  if (!principal) {
    throw new AppError("unauthorized", "The access token is unknown, expired or revoked, or was issued for another resource. Refresh it, or sign in again.", {
      headers: mcpChallenge(core, "invalid_token"),
    });
  }
  return { kind: "oauth", ...principal };
}

/**
 * The authenticate step: checks a request's credentials against the route's policy, and says who
 * sent it; throws a 401 problem when they fail. A request that must pay comes out `unpaid`.
 */
export async function authenticate(core: Core, policy: AuthPolicy, req: Request): Promise<Caller> {
  if (policy === "none") return { kind: "anonymous" } satisfies Anonymous;
  const token = bearerToken(req.get("authorization"));
  if (policy === "mcp") return authenticateMcp(core, token);
  const paying = policy === "agent_token_or_payment" || policy === "payment";
  if (!token && paying) return { kind: "unpaid", accountId: null } satisfies UnpaidAuth;
  if (token?.startsWith("at_") && (paying || policy === "api_key_or_agent_token")) {
    const principal = await authenticateAgentToken(core, token);
    if (!principal) {
      throw new AppError(
        "unauthorized",
        "The agent_token is invalid or has been revoked. Get one from the top-up route, /v1/billing/topup/x402/pay, or POST /v1/auth/agent-tokens with an API key.",
        {
          headers: challenge("invalid_token"),
        },
      );
    }
    const { accountId, tokenId } = principal;
    return policy === "payment"
      ? ({ kind: "unpaid", accountId, credential: { kind: "agent_token", id: tokenId, token } } satisfies UnpaidAuth)
      : ({ kind: "agent_token", accountId, tokenId } satisfies AgentTokenAuth);
  }
  if (policy === "agent_token_or_payment") {
    throw new AppError(
      "unauthorized",
      "These routes take an agent_token ('Authorization: Bearer at_...') or a payment (x402 or MPP), not an API key. API keys use the /v1 routes.",
      { headers: challenge("invalid_token") },
    );
  }
  if (!token) {
    throw new AppError("unauthorized", "Missing API key. Send it as 'Authorization: Bearer sk_...'; get one with POST /v1/auth/otp and /v1/auth/verify.", {
      headers: challenge(),
    });
  }
  if (policy === "api_key_or_push_token" && token.startsWith("pt_")) return { kind: "push_token", token } satisfies PushTokenAuth;
  // Every policy left takes an API key; a new policy fails to compile here until it is handled above.
  policy satisfies "api_key" | "api_key_or_push_token" | "api_key_or_agent_token" | "payment";
  const wrongKind = wrongCredentialDetail(policy, token);
  if (wrongKind) throw new AppError("unauthorized", wrongKind, { headers: challenge("invalid_token") });
  const principal = await authenticateApiKey(core, token);
  if (!principal) throw new AppError("unauthorized", "The API key is invalid or has been revoked.", { headers: challenge("invalid_token") });
  if (policy === "payment")
    return { kind: "unpaid", accountId: principal.accountId, credential: { kind: "api_key", id: principal.keyId } } satisfies UnpaidAuth;
  return { kind: "api_key", ...principal } satisfies ApiKeyAuth;
}
