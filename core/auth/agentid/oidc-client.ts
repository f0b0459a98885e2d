import * as oidc from "openid-client";
import type { AgentIdSettings } from "../../config.js";
import { AppError } from "../../errors.js";
import type { Logger } from "../../logger.js";

/** What one authorization request needs remembered until its callback. */
export interface AuthorizationRequest {
  authorizeUrl: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** How a callback ended, as the sign-in session records it. */
export type Redemption =
  | { kind: "signed_in"; issuer: string; subject: string }
  /** The user refused (the provider's `error=access_denied`). */
  | { kind: "denied"; reason: string }
  /** The provider's answer did not check out, or it refused the code. */
  | { kind: "failed"; reason: string }
  /** The provider could not be reached. */
  | { kind: "unavailable"; reason: string };

// The issuer's metadata changes rarely; an hour bounds how long a changed endpoint goes unseen.
// Its signing keys are openid-client's to refresh (it refetches the JWKS on an unknown key).
const METADATA_TTL_MS = 60 * 60_000;
// Seconds per provider call: a slow provider becomes a prompt 503 rather than a hung request.
const PROVIDER_TIMEOUT_S = 5;

/**
 * The OpenID Connect relying party for AgentID, over openid-client: discovery, the authorization
 * URL (code flow, PKCE S256, state, nonce), and the callback (state and `iss` checked before the
 * code is redeemed, then the ID token's signature against the issuer's JWKS, `aud`, `nonce` and
 * expiry). Kept apart from the session logic so that the protocol lives in one small place.
 */
export class AgentIdClient {
  private configuration: { value: Promise<oidc.Configuration>; at: number } | undefined;

  constructor(
    private readonly settings: AgentIdSettings,
    private readonly logger: Logger,
  ) {}

  /** A fresh authorization request; `redirectUri` must be registered with the provider. */
  async authorizationRequest(redirectUri: string, loginHint: string | undefined): Promise<AuthorizationRequest> {
    const config = await this.discover();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const parameters: Record<string, string> = {
      redirect_uri: redirectUri,
      scope: "openid",
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      state,
      nonce,
    };
    if (loginHint) parameters.login_hint = loginHint;
    return { authorizeUrl: oidc.buildAuthorizationUrl(config, parameters).href, state, nonce, codeVerifier };
  }

  /**
   * Checks the provider's redirect and redeems its code. `callbackUrl` is the registered
   * redirect URI with the query the provider sent. Never throws for what the provider or the
   * browser sent: every outcome is a Redemption.
   */
  async redeem(callbackUrl: URL, checks: { state: string; nonce: string; codeVerifier: string }): Promise<Redemption> {
    let config: oidc.Configuration;
    try {
      config = await this.discover();
    } catch (error) {
      return { kind: "unavailable", reason: error instanceof AppError ? error.detail : "The identity provider could not be reached." };
    }
    try {
      const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
      });
      const claims = tokens.claims()!;
      return { kind: "signed_in", issuer: claims.iss, subject: claims.sub };
    } catch (error) {
      return this.explain(error);
    }
  }

  /** The provider's metadata, fetched on first use and cached; a failure is a 503 and is not cached. */
  private discover(): Promise<oidc.Configuration> {
    const now = Date.now();
    if (!this.configuration || now - this.configuration.at > METADATA_TTL_MS) {
      const value = this.fetchConfiguration();
      const entry = { value, at: now };
      this.configuration = entry;
      value.catch(() => {
        if (this.configuration === entry) this.configuration = undefined;
      });
    }
    return this.configuration.value;
  }

  private async fetchConfiguration(): Promise<oidc.Configuration> {
    const { issuer, clientId, clientSecret } = this.settings;
    // Config accepts http only for a loopback issuer (tests, local development).
    const insecure = new URL(issuer).protocol === "http:";
    let server: oidc.ServerMetadata;
    try {
      const discovered = await oidc.discovery(new URL(issuer), clientId, undefined, undefined, {
        execute: insecure ? [oidc.allowInsecureRequests] : [],
        timeout: PROVIDER_TIMEOUT_S,
      });
      server = discovered.serverMetadata();
    } catch (cause) {
      this.logger.error({ err: cause, issuer }, "AgentID discovery failed");
      throw new AppError(
        "service_unavailable",
        "The AgentID identity provider cannot be reached right now. Try again shortly, or sign in with an e-mail code.",
        {
          cause,
          headers: { "Retry-After": "30" },
        },
      );
    }
    // RFC 8414: a provider that lists no methods takes client_secret_basic.
    const methods = server.token_endpoint_auth_methods_supported ?? ["client_secret_basic"];
    const auth = !clientSecret
      ? oidc.None()
      : methods.includes("client_secret_basic")
        ? oidc.ClientSecretBasic(clientSecret)
        : oidc.ClientSecretPost(clientSecret);
    const config = new oidc.Configuration(server, clientId, undefined, auth);
    config.timeout = PROVIDER_TIMEOUT_S;
    if (insecure) oidc.allowInsecureRequests(config);
    // The ID token comes straight from the token endpoint, where openid-client would trust TLS
    // alone; its signature is checked against the issuer's JWKS all the same.
    oidc.enableNonRepudiationChecks(config);
    return config;
  }

  private explain(error: unknown): Redemption {
    if (error instanceof oidc.AuthorizationResponseError) {
      // Whoever holds the browser writes these parameters: kept short, and shown only as text.
      const description = error.error_description ? `: ${error.error_description.slice(0, 200)}` : "";
      if (error.error === "access_denied") return { kind: "denied", reason: `The sign-in was refused at the identity provider${description}.` };
      return { kind: "failed", reason: `The identity provider answered ${error.error.slice(0, 64)}${description}.` };
    }
    const status = failedStatus(error);
    if (status !== undefined && status >= 500) return { kind: "unavailable", reason: `The identity provider failed (HTTP ${status}).` };
    if (error instanceof oidc.ResponseBodyError) {
      return {
        kind: "failed",
        reason: `The identity provider refused the code: ${error.error.slice(0, 64)}${error.error_description ? ` (${error.error_description.slice(0, 200)})` : ""}.`,
      };
    }
    if (isUnreachable(error)) {
      this.logger.warn({ err: error }, "AgentID provider unreachable during a callback");
      return { kind: "unavailable", reason: "The identity provider could not be reached." };
    }
    if (error instanceof oidc.ClientError) {
      return { kind: "failed", reason: `The identity provider's answer did not check out: ${describe(error)}.` };
    }
    this.logger.error({ err: error }, "AgentID callback failed unexpectedly");
    return { kind: "failed", reason: "The identity provider's answer could not be processed." };
  }
}

/** A network failure or timeout (fetch throws a bare TypeError; timeouts abort). */
function isUnreachable(error: unknown): boolean {
  // openid-client wraps the timeout's (or abort's) DOMException in a ClientError of its own.
  if (error instanceof oidc.ClientError) return isUnreachable(error.cause);
  const name = (error as { name?: string } | undefined)?.name;
  return name === "TimeoutError" || name === "AbortError" || (error instanceof TypeError && error.message === "fetch failed");
}

/** The HTTP status of a provider's error answer: an OAuth error body, or a response openid-client found not conform. */
function failedStatus(error: unknown): number | undefined {
  if (error instanceof oidc.ResponseBodyError) return error.status;
  if (error instanceof oidc.ClientError && error.cause instanceof Response) return error.cause.status;
  return undefined;
}

/** openid-client's message, with the underlying check's own (which names the claim) when there is one. */
function describe(error: oidc.ClientError): string {
  const inner = error.cause instanceof Error ? error.cause.message : undefined;
  return (inner ?? error.message).replace(/\.$/, "");
}
