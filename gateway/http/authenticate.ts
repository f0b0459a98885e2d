import type { Request } from "express";
import { authenticateApiKey, type ApiKeyPrincipal } from "../../core/auth/api-keys.js";
import type { Core } from "../../core/core.js";
import { AppError } from "../../core/errors.js";
import type { AuthPolicy } from "../../discovery/operation.js";

export type ApiKeyAuth = ApiKeyPrincipal & { kind: "api_key" };
export type Anonymous = { kind: "anonymous" };
/** A call's push token, not yet checked: only the handler knows which call it must match. */
export type PushTokenAuth = { kind: "push_token"; token: string };

/** The principal a handler receives under each auth policy. */
export type PrincipalFor<A extends AuthPolicy> = A extends "none"
  ? Anonymous
  : A extends "api_key"
    ? ApiKeyAuth
    : A extends "api_key_or_push_token"
      ? ApiKeyAuth | PushTokenAuth
      : never;

/** The bearer token of a request, or undefined when there is no Authorization: Bearer header. */
export function bearerToken(req: Request): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(req.get("authorization") ?? "");
  return match?.[1];
}

/** `WWW-Authenticate` for a 401, per RFC 6750. */
function challenge(error?: string): Record<string, string> {
  return { "WWW-Authenticate": error ? `Bearer realm="agentline", error="${error}"` : `Bearer realm="agentline"` };
}

/** Checks a request's credentials against the route's policy; throws a 401 problem when they fail. */
export async function authenticate(core: Core, policy: AuthPolicy, req: Request): Promise<unknown> {
  if (policy === "none") return { kind: "anonymous" } satisfies Anonymous;
  const token = bearerToken(req);
  if (!token) {
    throw new AppError("unauthorized", "Missing API key. Send it as 'Authorization: Bearer sk_...'; get one with POST /v1/auth/otp and /v1/auth/verify.", { headers: challenge() });
  }
  if (policy === "api_key_or_push_token" && token.startsWith("pt_")) return { kind: "push_token", token } satisfies PushTokenAuth;
  if (policy === "api_key" || policy === "api_key_or_push_token") {
    const principal = await authenticateApiKey(core, token);
    if (!principal) throw new AppError("unauthorized", "The API key is invalid or has been revoked.", { headers: challenge("invalid_token") });
    return { kind: "api_key", ...principal } satisfies ApiKeyAuth;
  }
  throw new AppError("unauthorized", `Authentication policy ${policy} is not available on this server.`, { headers: challenge() });
}
