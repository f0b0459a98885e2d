import type { Request, RequestHandler } from "express";
import { consumeRateLimits } from "../../core/auth/rate-limit.js";
import type { Core } from "../../core/context.js";
import { servingRequest } from "../http/deadline.js";
import { OAUTH_PATHS } from "./endpoints.js";
import { interactionPages } from "./interactions.js";
import { authorizationServer } from "./lazy-provider.js";

/** What oidc-provider answers itself: its endpoints and its metadata (RFC 8414, and OpenID's). */
const PROVIDER_PATHS = new Set<string>([
  OAUTH_PATHS.authorization,
  OAUTH_PATHS.token,
  OAUTH_PATHS.registration,
  OAUTH_PATHS.revocation,
  OAUTH_PATHS.jwks,
  "/.well-known/oauth-authorization-server",
  "/.well-known/openid-configuration",
]);

/** Registrations one address may make per 10 minutes: each is a row, kept until used or swept. */
export const REGISTRATION_LIMIT = { perIp: 20, windowMs: 10 * 60_000 } as const;

/**
 * The authorization server in the express app: oidc-provider's koa app for its paths, our pages
 * for the interactions. The provider sees every request as addressed to the issuer (BASE_URL,
 * else the listening address), whatever Host and X-Forwarded-* it arrived with: its endpoints,
 * its `iss` and its cookies' Secure flag then follow the issuer, behind a proxy or not, and a
 * client cannot make it name another host.
 */
export function oauthServer(core: Core): RequestHandler {
  const pages = interactionPages(core);
  let callback: ReturnType<Awaited<ReturnType<typeof authorizationServer>>["callback"]> | undefined;
  return (req, res, next) => {
    // The authorization endpoint resumes at /oauth/authorize/{uid} once a page's step is done.
    if (!PROVIDER_PATHS.has(req.path) && !req.path.startsWith(`${OAUTH_PATHS.authorization}/`)) return pages(req, res, next);
    const serve = async () => {
      if (req.path === OAUTH_PATHS.registration && req.method === "POST") await limitRegistrations(core, req);
      const base = new URL(core.baseUrl);
      req.headers["x-forwarded-host"] = base.host;
      req.headers["x-forwarded-proto"] = base.protocol.slice(0, -1);
      callback ??= (await authorizationServer(core)).callback();
      await callback(req, res);
    };
    servingRequest(req, res, serve).catch(next);
  };
}

async function limitRegistrations(core: Core, req: Request): Promise<void> {
  await core.db.transaction((tx) =>
    consumeRateLimits(
      tx,
      [
        {
          key: `oauth:register:ip:${req.ip ?? "unknown"}`,
          limit: REGISTRATION_LIMIT.perIp,
          windowMs: REGISTRATION_LIMIT.windowMs,
          label: "client registrations from this IP address",
        },
      ],
      core.now(),
    ),
  );
}
